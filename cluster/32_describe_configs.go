package cluster

// DescribeConfigs, versions 0-4.
//
// Topic resources: every topic-level setting with its value and source
// (the topic's override, else the level of the broker property that is
// its default); with include_synonyms, the override and then the broker
// property's synonyms (retention.ms: log.retention.ms, .minutes,
// .hours), Kafka's ConfigHelper order. Broker resources: this node's id
// lists every broker property with its effective value and source
// (DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG,
// STATIC_BROKER_CONFIG, DEFAULT_CONFIG), read_only false for the ones
// that change at run time (cluster.id only when the configuration names
// it: Kafka 4 keeps the id in meta.properties, not among its
// properties); "" (the cluster default) lists only the dynamic defaults,
// as Kafka does. Broker logger resources list this
// node's loggers and levels (broker_logger.go). Config names filter the
// answer. Documentation (v3+) is empty.

import (
	"maps"
	"slices"
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
		case kmsg.ConfigResourceTypeBroker, kmsg.ConfigResourceTypeBrokerLogger:
			b.describeBrokerResource(&sr, rr, req.IncludeSynonyms)
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

// describeBrokerResource answers a BROKER or BROKER_LOGGER resource.
func (b *Broker) describeBrokerResource(sr *kmsg.DescribeConfigsResponseResource, rr kmsg.DescribeConfigsRequestResource, synonyms bool) {
	own := strconv.Itoa(int(b.nodeID))
	switch {
	case rr.ResourceType == kmsg.ConfigResourceTypeBrokerLogger && rr.ResourceName == own:
		sr.Configs = b.describeLoggers(rr.ConfigNames)
	case rr.ResourceType == kmsg.ConfigResourceTypeBroker && rr.ResourceName == "":
		sr.Configs = b.describeBrokerDefaults(rr.ConfigNames, synonyms)
	case rr.ResourceType == kmsg.ConfigResourceTypeBroker && rr.ResourceName == own:
		sr.Configs = b.describeBrokerConfigs(rr.ConfigNames, synonyms)
	default:
		// Kafka: ConfigHelper.describeConfigs.
		sr.ErrorCode = kerr.InvalidRequest.Code
		msg := "Unexpected broker id, expected " + own + " or empty string, but received " + rr.ResourceName
		if rr.ResourceType == kmsg.ConfigResourceTypeBrokerLogger {
			msg = "Unexpected broker id, expected " + own + " but received " + rr.ResourceName
		}
		sr.ErrorMessage = &msg
	}
}

func (b *Broker) describeTopicConfigs(topic string, names []string, synonyms bool) []kmsg.DescribeConfigsResponseResourceConfig {
	tc := b.topicConfig(topic)
	eff := b.effectiveConfig()
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
		syns := eff.TopicSynonyms(n)
		if !isDefault {
			syns = append([]config.Synonym{{Name: n, Value: &v, Source: config.SourceDynamicTopic}}, syns...)
		}
		c.Source = kmsg.ConfigSourceDefaultConfig
		if len(syns) > 0 {
			c.Source = kmsg.ConfigSource(syns[0].Source)
		}
		c.IsDefault = c.Source == kmsg.ConfigSourceDefaultConfig
		if synonyms {
			c.ConfigSynonyms = kafkaSynonyms(syns)
		}
		out = append(out, c)
	}
	return out
}

// kafkaSynonyms converts synonyms to the response's.
func kafkaSynonyms(syns []config.Synonym) []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym {
	out := make([]kmsg.DescribeConfigsResponseResourceConfigConfigSynonym, 0, len(syns))
	for _, s := range syns {
		k := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
		k.Name, k.Value, k.Source = s.Name, s.Value, kmsg.ConfigSource(s.Source)
		out = append(out, k)
	}
	return out
}

// describeBrokerConfigs lists every broker property of this node: the
// effective value; the source and synonyms are Kafka's
// ConfigHelper.createBrokerConfigEntry's.
func (b *Broker) describeBrokerConfigs(names []string, synonyms bool) []kmsg.DescribeConfigsResponseResourceConfig {
	eff := b.effectiveConfig()
	want := wanted(names)
	var out []kmsg.DescribeConfigsResponseResourceConfig
	for _, n := range eff.Names() {
		if !want(n) {
			continue
		}
		v, ok := eff.Get(n)
		if !ok {
			continue
		}
		if n == "cluster.id" && eff.IsNull(n) {
			// Kafka 4 has no cluster.id property (meta.properties holds
			// the id); DescribeConfigs lists it only when the
			// configuration names it, as any property given.
			continue
		}
		out = append(out, brokerEntry(eff, n, v, true, synonyms))
	}
	return out
}

// describeBrokerDefaults lists the cluster-wide dynamic settings only.
func (b *Broker) describeBrokerDefaults(names []string, synonyms bool) []kmsg.DescribeConfigsResponseResourceConfig {
	eff := b.effectiveConfig()
	want := wanted(names)
	var out []kmsg.DescribeConfigsResponseResourceConfig
	defs := b.meta.image().BrokerConfigs("")
	for _, n := range slices.Sorted(maps.Keys(defs)) {
		if want(n) {
			out = append(out, brokerEntry(eff, n, defs[n], false, synonyms))
		}
	}
	return out
}

func brokerEntry(eff *config.Broker, name, value string, perNode, synonyms bool) kmsg.DescribeConfigsResponseResourceConfig {
	c := kmsg.NewDescribeConfigsResponseResourceConfig()
	c.Name, c.Value, c.ReadOnly = name, &value, !config.IsDynamic(name)
	if eff.IsSensitive(name) {
		c.Value, c.IsSensitive = nil, true
	}
	if value == "" && eff.IsNull(name) {
		c.Value = nil // Kafka: a null default shows as null
	}
	syns := eff.Synonyms(name, perNode)
	c.Source = kmsg.ConfigSourceDefaultConfig
	if len(syns) > 0 {
		c.Source = kmsg.ConfigSource(syns[0].Source)
	}
	c.IsDefault = c.Source == kmsg.ConfigSourceDefaultConfig
	if synonyms {
		c.ConfigSynonyms = kafkaSynonyms(syns)
	}
	return c
}
