package config

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Dynamic broker configuration (KIP-226): settings changed while a node
// runs, kept by the controller as ConfigRecords of resource BROKER, per
// node (resource name: the node id) or as the cluster-wide default
// (resource name ""). A node's effective value of a property is, in
// Kafka's order, its own dynamic setting, else the cluster default, else
// its static setting (server.properties and overrides), else the
// default.
//
// Kafka's DynamicBrokerConfig decides which properties may change and at
// which level; dynamicDefs below mirrors its tables for the properties
// Varve knows. Varve accepts a change only where it applies it live
// (applied); a property Kafka could change that Varve reads only at
// start-up is refused with Kafka's "Cannot update these configs
// dynamically" message, so a setting is never stored and then ignored.

// dynMode is where Kafka allows a dynamic property.
type dynMode uint8

const (
	clusterWide dynMode = iota // a node's resource or the cluster default
	perBroker                  // a node's resource only (listeners, key stores)
	perListener                // only as listener.name.<l>.<name>, and per node
)

// dynDef is one property Kafka's DynamicBrokerConfig.AllDynamicConfigs
// holds.
type dynDef struct {
	mode dynMode
	// applied says Varve applies a change without a restart; the
	// others are refused.
	applied bool
}

// dynamicDefs lists Kafka's dynamic broker properties that Varve knows:
// DynamicLogConfig (the log.* topic defaults), LogCleaner,
// DynamicThreadPool, SocketServer, DynamicListenerConfig,
// DynamicReplicationConfig, DynamicProducerStateManagerConfig and the
// SSL/SASL listener properties (SslConfigs.RECONFIGURABLE_CONFIGS).
var dynamicDefs = map[string]dynDef{
	// DynamicLogConfig: the broker defaults of topic settings. A topic
	// without its own setting takes the new default at once.
	"log.segment.bytes":                   {applied: true},
	"log.roll.ms":                         {applied: true},
	"log.roll.hours":                      {applied: true},
	"log.roll.jitter.ms":                  {applied: true},
	"log.roll.jitter.hours":               {applied: true},
	"log.index.size.max.bytes":            {applied: true},
	"log.index.interval.bytes":            {applied: true},
	"log.flush.interval.messages":         {applied: true},
	"log.flush.interval.ms":               {applied: true},
	"log.retention.bytes":                 {applied: true},
	"log.retention.ms":                    {applied: true},
	"log.retention.minutes":               {applied: true},
	"log.retention.hours":                 {applied: true},
	"log.cleanup.policy":                  {applied: true},
	"log.cleaner.delete.retention.ms":     {applied: true},
	"log.cleaner.min.compaction.lag.ms":   {applied: true},
	"log.cleaner.max.compaction.lag.ms":   {applied: true},
	"log.cleaner.min.cleanable.ratio":     {applied: true},
	"log.segment.delete.delay.ms":         {applied: true},
	"log.preallocate":                     {applied: true},
	"log.message.timestamp.type":          {applied: true},
	"log.message.timestamp.before.max.ms": {applied: true},
	"log.message.timestamp.after.max.ms":  {applied: true},
	"message.max.bytes":                   {applied: true},
	"min.insync.replicas":                 {applied: true},
	"compression.type":                    {applied: true},
	// Accepted statically but not used by Varve: a dynamic change
	// would be stored and ignored.
	"compression.gzip.level":            {},
	"compression.lz4.level":             {},
	"compression.zstd.level":            {},
	"log.local.retention.ms":            {},
	"log.local.retention.bytes":         {},
	"log.message.downconversion.enable": {},
	// The controller reads it at start-up.
	"unclean.leader.election.enable": {},

	// LogCleaner: the cleaner restarts with the new settings.
	"log.cleaner.threads":                 {applied: true},
	"log.cleaner.io.max.bytes.per.second": {applied: true},
	"log.cleaner.dedupe.buffer.size":      {applied: true},
	"log.cleaner.io.buffer.size":          {applied: true},
	"log.cleaner.io.buffer.load.factor":   {applied: true},
	"log.cleaner.backoff.ms":              {applied: true},

	// DynamicThreadPool and SocketServer: the handler pool and the
	// processors resize live (CheckThreadCounts bounds the step); the
	// other pools are sized at start-up.
	"num.io.threads":                    {applied: true},
	"num.network.threads":               {applied: true},
	"num.replica.fetchers":              {},
	"num.recovery.threads.per.data.dir": {},
	"background.threads":                {},
	"max.connections":                   {applied: true},
	"max.connections.per.ip":            {applied: true},
	"max.connections.per.ip.overrides":  {},
	"max.connection.creation.rate":      {},

	// DynamicConfig.Broker's replication quotas (KIP-73): the leader's
	// and the follower's quota take the new bound at once.
	"leader.replication.throttled.rate":   {applied: true},
	"follower.replication.throttled.rate": {applied: true},
	"producer.id.expiration.ms":           {},
	// The copy of a move between log dirs takes the new rate at once.
	"replica.alter.log.dirs.io.max.bytes.per.second": {applied: true},

	// DynamicListenerConfig: per node only.
	"listeners":                      {mode: perBroker},
	"advertised.listeners":           {mode: perBroker},
	"listener.security.protocol.map": {mode: perBroker},
}

// dynamicListenerProps are SslConfigs.RECONFIGURABLE_CONFIGS and the
// SASL ones: dynamic only with a listener prefix, per node.
var dynamicListenerProps = []string{
	"ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
	"ssl.keystore.key", "ssl.keystore.certificate.chain",
	"ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password", "ssl.truststore.certificates",
}

// IsDynamic reports whether name may be changed on a running node:
// read_only is false for it in DescribeConfigs.
func IsDynamic(name string) bool { return dynamicDefs[name].applied }

// DynamicError is a refused dynamic change, with Kafka's message.
// Kafka answers it INVALID_REQUEST (ConfigAdminManager turns the
// ConfigException into an InvalidRequestException, KAFKA-13609).
type DynamicError struct{ Msg string }

func (e *DynamicError) Error() string { return e.Msg }

// CheckDynamic is Kafka's DynamicBrokerConfig.validateConfigs for the
// names and values of a change: props are the settings being set at
// the cluster default (perNode false) or on one node. It refuses names
// that are not dynamic, security properties without a listener prefix,
// per-node names at the default, values that do not parse, and the
// properties Kafka could change that Varve cannot apply live.
func CheckDynamic(props map[string]string, perNode bool) error {
	names := slices.Sorted(maps.Keys(props))
	var nonDynamic, unprefixed, nodeOnly, notApplied []string
	for _, n := range names {
		base, listener := listenerBase(n)
		d, ok := dynamicDefs[base]
		switch {
		case listener && slices.Contains(dynamicListenerProps, base):
			if !perNode {
				nodeOnly = append(nodeOnly, n)
			} else {
				notApplied = append(notApplied, n)
			}
		case listener || !ok && !slices.Contains(dynamicListenerProps, n):
			nonDynamic = append(nonDynamic, n)
		case !ok:
			unprefixed = append(unprefixed, n)
		case d.mode != clusterWide && !perNode:
			nodeOnly = append(nodeOnly, n)
		case !d.applied:
			notApplied = append(notApplied, n)
		}
	}
	if err := firstDynamicError(nonDynamic, unprefixed); err != nil {
		return err
	}
	if err := checkDynamicValues(props); err != nil {
		return err
	}
	if len(nodeOnly) > 0 {
		return &DynamicError{"Cannot update these configs at default cluster level, broker id must be specified: " + scalaSet(nodeOnly)}
	}
	if len(notApplied) > 0 {
		return &DynamicError{"Cannot update these configs dynamically: " + scalaSet(notApplied) + " (Varve applies them only at start-up)"}
	}
	return nil
}

func firstDynamicError(nonDynamic, unprefixed []string) error {
	if len(nonDynamic) > 0 {
		return &DynamicError{"Cannot update these configs dynamically: " + scalaSet(nonDynamic)}
	}
	if len(unprefixed) > 0 {
		return &DynamicError{"These security configs can be dynamically updated only per-listener using the listener prefix: " + scalaSet(unprefixed)}
	}
	return nil
}

// checkDynamicValues parses each value as its property's type and
// range, with Kafka's ConfigException words.
func checkDynamicValues(props map[string]string) error {
	for _, n := range slices.Sorted(maps.Keys(props)) {
		base, _ := listenerBase(n)
		d := brokerIndex().byName[base]
		if d == nil {
			continue
		}
		if _, err := d.value(strings.TrimSpace(props[n])); err != nil {
			return &DynamicError{fmt.Sprintf("Invalid value %s for configuration %s: %s", props[n], n, reason(err))}
		}
	}
	return nil
}

func reason(err error) string {
	var pe *PropertyError
	if errors.As(err, &pe) {
		return pe.Reason
	}
	return err.Error()
}

// listenerBase strips listener.name.<l>. from a name.
func listenerBase(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, listenerPrefix)
	if !ok {
		return name, false
	}
	_, base, ok := strings.Cut(rest, ".")
	return base, ok
}

// scalaSet renders names as Kafka's messages print a Scala Set.
func scalaSet(names []string) string {
	kind := "Set"
	if len(names) > 4 {
		kind = "HashSet"
	}
	return kind + "(" + strings.Join(names, ", ") + ")"
}

// dynamicState is what WithDynamic layered over a node's static
// configuration.
type dynamicState struct {
	static     map[string]string // as given to Parse, listener properties included
	dynDefault map[string]string // the cluster-wide dynamic settings
	dynNode    map[string]string // this node's dynamic settings
}

// WithDynamic returns the configuration a node runs with when the
// cluster default clusterDefault and its own settings node (either may
// be nil) are layered over b's static configuration, re-derived as
// Kafka's KafkaConfig derives it (a dynamic log.retention.ms beats a
// static log.retention.hours). b is not changed. Settings that are not
// dynamic are ignored, as Kafka ignores them when it reads the records.
func (b *Broker) WithDynamic(clusterDefault, node map[string]string) (*Broker, error) {
	st := b.dynamic()
	merged := maps.Clone(st.static)
	if merged == nil {
		merged = map[string]string{}
	}
	def, own := onlyApplied(clusterDefault), onlyApplied(node)
	maps.Copy(merged, def)
	maps.Copy(merged, own)
	nb, err := Parse(merged)
	if err != nil {
		return nil, err
	}
	nb.dyn = &dynamicState{static: st.static, dynDefault: def, dynNode: own}
	return nb, nil
}

func onlyApplied(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if IsDynamic(k) {
			out[k] = v
		}
	}
	return out
}

// dynamic returns the layers b was built from; a Broker from Parse has
// only the static one.
func (b *Broker) dynamic() *dynamicState {
	if b.dyn != nil {
		return b.dyn
	}
	return &dynamicState{static: b.given}
}

// DynamicDefault and DynamicNode return the dynamic settings in effect
// (copies).
func (b *Broker) DynamicDefault() map[string]string { return maps.Clone(b.dynamic().dynDefault) }

// DynamicNode returns this node's own dynamic settings in effect.
func (b *Broker) DynamicNode() map[string]string { return maps.Clone(b.dynamic().dynNode) }

// Source is where a value comes from, Kafka's ConfigSource.
type Source int8

// Kafka's ConfigSource ids.
const (
	SourceDynamicTopic   Source = 1
	SourceDynamicBroker  Source = 2
	SourceDynamicDefault Source = 3
	SourceStatic         Source = 4
	SourceDefault        Source = 5
)

// Synonym is one level at which a property, or one of its synonyms, is
// set.
type Synonym struct {
	Name   string
	Value  *string // nil for a sensitive property
	Source Source
}

// brokerSynonyms is Kafka's DynamicBrokerConfig.brokerConfigSynonyms: the
// names that set the same value, highest precedence first.
func brokerSynonyms(name string) []string {
	switch name {
	case "log.roll.ms", "log.roll.hours":
		return []string{"log.roll.ms", "log.roll.hours"}
	case "log.roll.jitter.ms", "log.roll.jitter.hours":
		return []string{"log.roll.jitter.ms", "log.roll.jitter.hours"}
	case "log.flush.interval.ms":
		return []string{"log.flush.interval.ms", "log.flush.scheduler.interval.ms"}
	case "log.retention.ms", "log.retention.minutes", "log.retention.hours":
		return []string{"log.retention.ms", "log.retention.minutes", "log.retention.hours"}
	}
	return []string{name}
}

// Synonyms is Kafka's ConfigHelper.configSynonyms for broker property
// name: every level holding it or a synonym, the levels in precedence
// order (this node's dynamic settings when perNode, the cluster default,
// the static file, the defaults), each level's synonyms in theirs,
// starting from the first entry for name itself.
func (b *Broker) Synonyms(name string, perNode bool) []Synonym {
	st := b.dynamic()
	names := brokerSynonyms(name)
	sensitive := b.IsSensitive(name)
	var out []Synonym
	add := func(m map[string]string, src Source) {
		for _, n := range names {
			v, ok := m[n]
			if !ok {
				continue
			}
			s := Synonym{Name: n, Value: &v, Source: src}
			if sensitive {
				s.Value = nil
			}
			out = append(out, s)
		}
	}
	if perNode {
		add(st.dynNode, SourceDynamicBroker)
	}
	add(st.dynDefault, SourceDynamicDefault)
	add(st.static, SourceStatic)
	add(staticDefaults(), SourceDefault)
	for len(out) > 0 && out[0].Name != name {
		out = out[1:]
	}
	return out
}

// TopicSynonyms is the broker part of a topic property's synonyms: those
// of the broker property that is its default (retention.ms:
// log.retention.ms, .minutes, .hours). nil for a property with none.
func (b *Broker) TopicSynonyms(topicProp string) []Synonym {
	d := topicIndex().byName[topicProp]
	if d == nil || d.synonym == "" {
		return nil
	}
	return b.Synonyms(d.synonym, true)
}

// staticDefaults are the non-null defaults (Kafka's
// KafkaConfig.defaultValues), by name.
var staticDefaults = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	for i := range brokerDefs {
		if d := &brokerDefs[i]; !d.null {
			m[d.name] = d.deflt
		}
	}
	return m
})

// Source returns where name's effective value comes from, as
// DescribeConfigs reports it: the first synonym's level, else the
// default.
func (b *Broker) Source(name string) Source {
	if s := b.Synonyms(name, true); len(s) > 0 {
		return s[0].Source
	}
	return SourceDefault
}

// TopicSynonym returns the broker properties that set topic property
// name's default (log.retention.ms, .minutes and .hours for
// retention.ms); nil for one without.
func TopicSynonym(name string) []string {
	d := topicIndex().byName[name]
	if d == nil || d.synonym == "" {
		return nil
	}
	return brokerSynonyms(d.synonym)
}

// IsNull reports whether name has no value: Kafka's default is null, it
// was not given at any level, and nothing derives it (log.retention.minutes
// when unset). DescribeConfigs shows such a value as null.
func (b *Broker) IsNull(name string) bool {
	d := brokerIndex().byName[name]
	if d == nil || !d.null || d.derived {
		return false
	}
	_, given := b.set[name]
	return !given
}

// ThreadCountProps are the thread counts a running node resizes.
var ThreadCountProps = []string{"num.io.threads", "num.network.threads"}

// CheckThreadCounts is Kafka's DynamicThreadPool.validateReconfiguration
// (and SocketServer's, for num.network.threads): a thread count that
// changes from cur to next must be at least 1, at least half the
// current value (integer division) and at most twice it.
func CheckThreadCounts(cur, next *Broker) error {
	for _, n := range ThreadCountProps {
		o, nw := threadCount(cur, n), threadCount(next, n)
		if o == nw {
			continue
		}
		msg := fmt.Sprintf("Dynamic thread count update validation failed for %s=%d", n, nw)
		switch {
		case nw <= 0:
			return &DynamicError{msg + ", value should be at least 1"}
		case nw < o/2:
			return &DynamicError{fmt.Sprintf("%s, value should be at least half the current value %d", msg, o)}
		case nw > o*2:
			return &DynamicError{fmt.Sprintf("%s, value should not be greater than double the current value %d", msg, o)}
		}
	}
	return nil
}

func threadCount(b *Broker, name string) int {
	if name == "num.io.threads" {
		return b.NumIoThreads
	}
	return b.NumNetworkThreads
}
