package cluster

// IncrementalAlterConfigs, versions 0-1.
//
// Topic resources: SET and DELETE (back to the broker default) of
// topic-level settings, validated as CreateTopics validates them, stored
// in the metadata, and applied at once to the topic's live logs (segment,
// flush and retention settings take effect on the next append, roll or
// cleaner pass). The change is persisted as ConfigRecords before the new
// image is published. APPEND and SUBTRACT apply to list settings
// (cleanup.policy). Broker resources (a node id, or "" for the cluster
// default) change dynamic broker settings (KIP-226; broker_config*.go):
// only the properties Kafka allows to change at run time and Varve
// applies live, refused otherwise with Kafka's INVALID_REQUEST and
// message; a DELETE of a setting that is not set succeeds and changes
// nothing. Broker logger resources set a logger's level
// (broker_logger.go).

import (
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	"github.com/varve/varve/controller"
	"github.com/varve/varve/metadata"
	vnet "github.com/varve/varve/net"
)

func init() {
	register(&api{key: kmsg.IncrementalAlterConfigs.Int16(), min: 0, max: 1, serve: serveIncrementalAlterConfigs})
}

func serveIncrementalAlterConfigs(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.IncrementalAlterConfigsRequest)
	resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	for _, rr := range req.Resources {
		sr := kmsg.NewIncrementalAlterConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
		err := b.configResourceError(r, acl.OpAlterConfigs, rr.ResourceType, rr.ResourceName)
		switch {
		case err != nil:
		case rr.ResourceType == kmsg.ConfigResourceTypeTopic:
			err = b.alterTopicConfigs(rr.ResourceName, rr.Configs, req.ValidateOnly)
		case rr.ResourceType == kmsg.ConfigResourceTypeBroker:
			err = b.alterBrokerConfigs(rr.ResourceName, brokerConfigChanges(rr.Configs), req.ValidateOnly)
		case rr.ResourceType == kmsg.ConfigResourceTypeBrokerLogger:
			err = b.alterLoggers(rr.ResourceName, brokerConfigChanges(rr.Configs), req.ValidateOnly)
		default:
			err = fmt.Errorf("%w: only topic and broker configurations can be altered", kerr.InvalidRequest)
		}
		sr.ErrorCode = errorCode(err)
		if err != nil {
			msg := err.Error()
			sr.ErrorMessage = &msg
		}
		resp.Resources = append(resp.Resources, sr)
	}
	return resp
}

// brokerConfigChanges are a broker resource's operations as the
// controller package names them.
func brokerConfigChanges(ops []kmsg.IncrementalAlterConfigsRequestResourceConfig) []controller.ConfigChange {
	out := make([]controller.ConfigChange, len(ops))
	for i, op := range ops {
		out[i] = controller.ConfigChange{Name: op.Name, Op: controller.ConfigOp(op.Op), Value: op.Value}
	}
	return out
}

func (b *Broker) alterTopicConfigs(topic string, ops []kmsg.IncrementalAlterConfigsRequestResourceConfig, validateOnly bool) error {
	t, ok := b.meta.image().Topic(topic)
	if !ok {
		return kerr.UnknownTopicOrPartition
	}
	current := b.topicConfig(topic)
	changes := map[string]*string{}
	for _, op := range ops {
		v, err := applyConfigOp(current, op)
		if err != nil {
			return err
		}
		changes[op.Name] = v
	}
	next, err := current.With(changes)
	if err != nil {
		return fmt.Errorf("%w: %v", kerr.InvalidConfig, err)
	}
	if validateOnly {
		return nil
	}
	if b.ctrl != nil {
		// Each node applies the change to its logs as its image shows it.
		return b.forwardAlterConfigs(topic, t.ID, changes)
	}
	_, err = b.meta.change(func(cur *metadata.Image) ([]metadata.Record, error) {
		tm, ok := cur.Topic(topic)
		if !ok || tm.ID != t.ID {
			return nil, kerr.UnknownTopicOrPartition
		}
		return metadata.TopicConfigRecords(topic, tm.Configs, next.Overrides()), nil
	})
	if err != nil {
		return err
	}
	b.forgetTopicConfig(topic)
	if err := b.parts.UpdateLogConfig(topic); err != nil {
		return fmt.Errorf("%w: %v", kerr.InvalidConfig, err)
	}
	b.log.Info("topic config altered", "topic", topic, "overrides", next.Overrides())
	return nil
}

// applyConfigOp turns one operation into a new value (nil: delete).
func applyConfigOp(current interface {
	Get(string) (string, bool, bool)
}, op kmsg.IncrementalAlterConfigsRequestResourceConfig) (*string, error) {
	switch op.Op {
	case kmsg.IncrementalAlterConfigOpSet:
		if op.Value == nil {
			return nil, fmt.Errorf("%w: SET %s without a value", kerr.InvalidConfig, op.Name)
		}
		return op.Value, nil
	case kmsg.IncrementalAlterConfigOpDelete:
		return nil, nil
	case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
		cur, _, ok := current.Get(op.Name)
		if !ok || op.Value == nil {
			return nil, fmt.Errorf("%w: %s is not a list setting", kerr.InvalidConfig, op.Name)
		}
		list := splitList(cur)
		for _, item := range splitList(*op.Value) {
			i := slices.Index(list, item)
			if op.Op == kmsg.IncrementalAlterConfigOpAppend && i < 0 {
				list = append(list, item)
			}
			if op.Op == kmsg.IncrementalAlterConfigOpSubtract && i >= 0 {
				list = slices.Delete(list, i, i+1)
			}
		}
		v := strings.Join(list, ",")
		return &v, nil
	}
	return nil, fmt.Errorf("%w: unknown operation %d", kerr.InvalidRequest, op.Op)
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
