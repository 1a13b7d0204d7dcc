package cluster

// DescribeConfigs, versions 0-4.
//
// Topic resources: every topic-level setting with its value and source
// (dynamic topic config for overrides, default otherwise; v1+ sources
// and synonyms); broker resources (this node's id, or empty): every
// broker property with its source (static file, or default). Config
// names filter the answer. Documentation (v3+) is empty.

import (
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	"github.com/varve/varve/config"
	vnet "github.com/varve/varve/net"
)

func init() {
	register(&api{key: kmsg.DescribeConfigs.Int16(), min: 0, max: 4, serve: serveDescribeConfigs})
}

func topicConfigNames() []string { return config.TopicNames() }

func serveDescribeConfigs(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.DescribeConfigsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
	for _, rr := range req.Resources {
		sr := kmsg.NewDescribeConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
		if err := b.configResourceError(r, acl.OpDescribeConfigs, rr.ResourceType, rr.ResourceName); err != nil {
			sr.ErrorCode = errorCode(err)
			resp.Resources = append(resp.Resources, sr)
			continue
		}
		switch rr.ResourceType {
		case kmsg.ConfigResourceTypeTopic:
			if _, ok := b.meta.image().Topic(rr.ResourceName); !ok {
				sr.ErrorCode = kerr.UnknownTopicOrPartition.Code
				break
			}
			sr.Configs = b.describeTopicConfigs(rr.ResourceName, rr.ConfigNames, req.IncludeSynonyms)
		case kmsg.ConfigResourceTypeBroker:
			if rr.ResourceName != "" && rr.ResourceName != strconv.Itoa(int(b.nodeID)) {
				sr.ErrorCode = kerr.InvalidRequest.Code
				break
			}
			sr.Configs = b.describeBrokerConfigs(rr.ConfigNames)
		default:
			sr.ErrorCode = kerr.InvalidRequest.Code
		}
		resp.Resources = append(resp.Resources, sr)
	}
	return resp
}

func wanted(names []string) func(string) bool {
	if names == nil {
		return func(string) bool { return true }
	}
	set := map[string]bool{}
	for _, n := range names {
		set[n] = true
	}
	return func(n string) bool { return set[n] }
}

func (b *Broker) describeTopicConfigs(topic string, names []string, synonyms bool) []kmsg.DescribeConfigsResponseResourceConfig {
	tc := b.topicConfig(topic)
	want := wanted(names)
	var out []kmsg.DescribeConfigsResponseResourceConfig
	for _, n := range topicConfigNames() {
		if !want(n) {
			continue
		}
		v, isDefault, ok := tc.Get(n)
		if !ok {
			continue
		}
		c := kmsg.NewDescribeConfigsResponseResourceConfig()
		c.Name, c.Value = n, &v
		c.Source = kmsg.ConfigSourceDynamicTopicConfig
		if isDefault {
			c.Source = kmsg.ConfigSourceDefaultConfig
		}
		c.IsDefault = isDefault
		if synonyms {
			s := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
			s.Name, s.Value, s.Source = n, &v, c.Source
			c.ConfigSynonyms = append(c.ConfigSynonyms, s)
		}
		out = append(out, c)
	}
	return out
}

func (b *Broker) describeBrokerConfigs(names []string) []kmsg.DescribeConfigsResponseResourceConfig {
	want := wanted(names)
	var out []kmsg.DescribeConfigsResponseResourceConfig
	for _, n := range b.cfg.Names() {
		if !want(n) {
			continue
		}
		v, ok := b.cfg.Get(n)
		if !ok {
			continue
		}
		c := kmsg.NewDescribeConfigsResponseResourceConfig()
		c.Name, c.Value, c.ReadOnly = n, &v, true
		if b.cfg.IsSensitive(n) {
			c.Value, c.IsSensitive = nil, true
		}
		c.Source = kmsg.ConfigSourceStaticBrokerConfig
		if b.cfg.IsDefault(n) {
			c.Source, c.IsDefault = kmsg.ConfigSourceDefaultConfig, true
		}
		out = append(out, c)
	}
	return out
}
