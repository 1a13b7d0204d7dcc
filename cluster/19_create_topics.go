package cluster

// CreateTopics, versions 0-7.
//
// Name rules, partition count (-1: num.partitions), replication factor
// (-1: default.replication.factor; one node can hold only 1),
// configuration overrides (validated against Kafka's topic-level names),
// validate-only. v5+ answers with the partition count, replication factor
// and the topic's resulting configuration; v7+ with the topic id. Manual
// replica assignments are accepted when they name only this node.

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	vnet "github.com/varve/varve/net"
)

func init() {
	register(&api{key: kmsg.CreateTopics.Int16(), min: 0, max: 7, serve: serveCreateTopics})
}

func serveCreateTopics(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.CreateTopicsRequest)
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
	for _, rt := range req.Topics {
		st := kmsg.NewCreateTopicsResponseTopic()
		st.Topic, st.NumPartitions, st.ReplicationFactor = rt.Topic, -1, -1
		partitions, rf := rt.NumPartitions, rt.ReplicationFactor
		if len(rt.ReplicaAssignment) > 0 {
			partitions, rf = int32(len(rt.ReplicaAssignment)), -1
			for _, a := range rt.ReplicaAssignment {
				if len(a.Replicas) != 1 || a.Replicas[0] != b.nodeID {
					partitions = 0 // an assignment naming other brokers cannot be placed
				}
			}
			rf = 1
		}
		configs := map[string]string{}
		for _, c := range rt.Configs {
			if c.Value != nil {
				configs[c.Name] = *c.Value
			}
		}
		err := b.refuseInternalTopicCreation(rt.Topic)
		var t topicMeta
		if err == nil {
			t, err = b.createTopic(rt.Topic, partitions, rf, configs, req.ValidateOnly)
		}
		st.ErrorCode = errorCode(err)
		if err != nil {
			msg := err.Error()
			var ke *kerr.Error
			if errors.As(err, &ke) && msg == ke.Message {
				msg = ke.Description
			}
			st.ErrorMessage = &msg
			resp.Topics = append(resp.Topics, st)
			continue
		}
		st.TopicID, st.NumPartitions, st.ReplicationFactor = t.ID, t.Partitions, 1
		st.Configs = b.createdTopicConfigs(rt.Topic, configs)
		resp.Topics = append(resp.Topics, st)
	}
	return resp
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
