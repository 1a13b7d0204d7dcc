package cluster

// CreateTopics, versions 0-7.
//
// Name rules, partition count (-1: num.partitions), replication factor
// (-1: default.replication.factor; one node can hold only 1),
// configuration overrides (validated against Kafka's topic-level names),
// validate-only. v5+ answers with the partition count, replication factor
// and the topic's resulting configuration; v7+ with the topic id. Manual
// replica assignments are checked as Kafka's controller checks them
// (controller.CheckTopicAssignments): on a single node they can name
// this node alone; in a cluster the controller places them.

import (
	"cmp"

	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/controller"
	"github.com/varve/varve/metadata"
	vnet "github.com/varve/varve/net"
)

func init() {
	register(&api{key: kmsg.CreateTopics.Int16(), min: 0, max: 7, serve: serveCreateTopics})
}

func serveCreateTopics(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.CreateTopicsRequest)
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
	// Internal topics are the broker's: refused before anything else.
	errs := make([]error, len(req.Topics))
	var specs []topicSpec
	var at []int // index in req.Topics of each spec
	for i, rt := range req.Topics {
		if errs[i] = cmp.Or(b.createTopicError(r, rt.Topic), b.refuseInternalTopicCreation(rt.Topic)); errs[i] == nil {
			specs, at = append(specs, b.createTopicSpec(rt)), append(at, i)
		}
	}
	// Kafka: KIP-599, THROTTLING_QUOTA_EXCEEDED from v6.
	q := b.mutationCheck(r, r.Version >= 6)
	created, createErrs := b.createTopics(specs, req.ValidateOnly, q)
	topics := make([]*metadata.Topic, len(req.Topics))
	for j, i := range at {
		topics[i], errs[i] = created[j], createErrs[j]
	}
	for i, rt := range req.Topics {
		st := kmsg.NewCreateTopicsResponseTopic()
		st.Topic, st.NumPartitions, st.ReplicationFactor = rt.Topic, -1, -1
		if err := errs[i]; err != nil {
			st.ErrorCode = errorCode(err)
			msg := err.Error()
			var ke *kerr.Error
			if errors.As(err, &ke) && msg == ke.Message {
				msg = ke.Description
			}
			st.ErrorMessage = &msg
			resp.Topics = append(resp.Topics, st)
			continue
		}
		st.TopicID, st.NumPartitions, st.ReplicationFactor = topics[i].ID, int32(len(topics[i].Partitions)), 1
		if ps := topics[i].Partitions; len(ps) > 0 && len(ps[0].Replicas) > 0 {
			st.ReplicationFactor = int16(len(ps[0].Replicas))
		}
		st.Configs = b.createdTopicConfigs(rt.Topic, specs[i].configs)
		resp.Topics = append(resp.Topics, st)
	}
	resp.ThrottleMillis = q.throttleMs()
	return resp
}

// createTopicSpec reads one topic of a request.
func (b *Broker) createTopicSpec(rt kmsg.CreateTopicsRequestTopic) topicSpec {
	s := topicSpec{name: rt.Topic, partitions: rt.NumPartitions, rf: rt.ReplicationFactor, configs: map[string]string{}}
	for _, a := range rt.ReplicaAssignment {
		s.assignments = append(s.assignments, controller.ReplicaAssignment{Partition: a.Partition, Replicas: a.Replicas})
	}
	for _, c := range rt.Configs {
		if c.Value != nil {
			s.configs[c.Name] = *c.Value
		}
	}
	return s
}

// createdTopicConfigs lists a new topic's configuration (v5+).
func (b *Broker) createdTopicConfigs(name string, overrides map[string]string) []kmsg.CreateTopicsResponseTopicConfig {
	tc, err := b.cfg.ParseTopic(overrides)
	if err != nil {
		return nil
	}
	var out []kmsg.CreateTopicsResponseTopicConfig
	for _, n := range topicConfigNames() {
		v, isDefault, ok := tc.Get(n)
		if !ok {
			continue
		}
		c := kmsg.NewCreateTopicsResponseTopicConfig()
		c.Name, c.Value = n, &v
		c.Source = int8(kmsg.ConfigSourceDynamicTopicConfig)
		if isDefault {
			c.Source = int8(kmsg.ConfigSourceDefaultConfig)
		}
		out = append(out, c)
	}
	return out
}
