package cluster

// AlterConfigs, versions 0-2: the older form of IncrementalAlterConfigs
// that replaces a resource's whole configuration. Topic resources: the
// settings given become the topic's overrides and every other override
// is removed; broker resources (a node id, or "" for the cluster
// default): the settings given become the resource's dynamic settings,
// with the checks of IncrementalAlterConfigs (broker_config_alter.go).
// Broker logger resources are INVALID_REQUEST, as in Kafka, which
// serves them only through IncrementalAlterConfigs.

import (
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	vnet "github.com/varve/varve/net"
)

func init() {
	register(&api{key: kmsg.AlterConfigs.Int16(), min: 0, max: 2, serve: serveAlterConfigs})
}

func serveAlterConfigs(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.AlterConfigsRequest)
	resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
	for _, rr := range req.Resources {
		sr := kmsg.NewAlterConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
		err := b.configResourceError(r, acl.OpAlterConfigs, rr.ResourceType, rr.ResourceName)
		if err == nil {
			err = b.replaceConfigs(rr, req.ValidateOnly)
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

// replaceConfigs turns a resource's new configuration into the
// operations IncrementalAlterConfigs applies: SET each setting given,
// DELETE each one set now and not given.
func (b *Broker) replaceConfigs(rr kmsg.AlterConfigsRequestResource, validateOnly bool) error {
	var current map[string]string
	switch rr.ResourceType {
	case kmsg.ConfigResourceTypeTopic:
		t, ok := b.meta.image().Topic(rr.ResourceName)
		if !ok {
			return kerr.UnknownTopicOrPartition
		}
		current = t.Configs
	case kmsg.ConfigResourceTypeBroker:
		current = b.meta.image().BrokerConfigs(rr.ResourceName)
	default:
		return &kafkaError{kerr.InvalidRequest, "AlterConfigs is deprecated and does not support the resource type " + rr.ResourceType.String()}
	}
	ops := replacementOps(current, rr.Configs)
	if rr.ResourceType == kmsg.ConfigResourceTypeTopic {
		return b.alterTopicConfigs(rr.ResourceName, ops, validateOnly)
	}
	return b.alterBrokerConfigs(rr.ResourceName, brokerConfigChanges(ops), validateOnly)
}

func replacementOps(current map[string]string, given []kmsg.AlterConfigsRequestResourceConfig) []kmsg.IncrementalAlterConfigsRequestResourceConfig {
	var ops []kmsg.IncrementalAlterConfigsRequestResourceConfig
	named := map[string]bool{}
	for _, c := range given {
		op := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		op.Name, op.Value, op.Op = c.Name, c.Value, kmsg.IncrementalAlterConfigOpSet
		if c.Value == nil {
			op.Op = kmsg.IncrementalAlterConfigOpDelete
		}
		ops = append(ops, op)
		named[c.Name] = true
	}
	for _, k := range slices.Sorted(maps.Keys(current)) {
		if !named[k] {
			op := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
			op.Name, op.Op = k, kmsg.IncrementalAlterConfigOpDelete
			ops = append(ops, op)
		}
	}
	return ops
}
