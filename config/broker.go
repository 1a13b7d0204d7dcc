package config

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"reflect"
	"strings"
	"sync"

	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

// Broker is a node's configuration: one typed field per property the node
// uses, each commented with its Kafka name. Parse fills every field, from
// the given value or from the default; properties Kafka leaves null are
// derived from their synonyms (log.retention.ms from
// log.retention.minutes or log.retention.hours, advertised.listeners from
// listeners, ...). Durations keep Kafka's milliseconds (Millis).
//
// A Broker is not safe for concurrent mutation; after Parse it is only
// read, and any number of goroutines may read it.
type Broker struct {
	// Node identity and the KRaft quorum.
	NodeID                           int           // node.id (broker.id is an alias)
	ProcessRoles                     []string      // process.roles
	ControllerQuorumVoters           []QuorumVoter // controller.quorum.voters
	ControllerQuorumBootstrapServers []string      // controller.quorum.bootstrap.servers
	ControllerListenerNames          []string      // controller.listener.names
	ClusterID                        string        // cluster.id (Kafka keeps it in meta.properties)
	BrokerHeartbeatIntervalMs        Millis        // broker.heartbeat.interval.ms
	BrokerSessionTimeoutMs           Millis        // broker.session.timeout.ms
	QuorumElectionTimeoutMs          Millis        // controller.quorum.election.timeout.ms
	QuorumFetchTimeoutMs             Millis        // controller.quorum.fetch.timeout.ms
	QuorumRequestTimeoutMs           Millis        // controller.quorum.request.timeout.ms
	QuorumRetryBackoffMs             Millis        // controller.quorum.retry.backoff.ms
	MetadataLogDir                   string        // metadata.log.dir (default: the first of log.dirs)
	BrokerRack                       string        // broker.rack

	MetadataLogMaxSnapshotIntervalMs          int64 // metadata.log.max.snapshot.interval.ms
	MetadataLogMaxRecordBytesBetweenSnapshots int64 // metadata.log.max.record.bytes.between.snapshots

	// Listeners.
	Listeners                   []Listener        // listeners
	AdvertisedListeners         []Listener        // advertised.listeners (default: listeners)
	ListenerSecurityProtocolMap []ProtocolMapping // listener.security.protocol.map
	InterBrokerListenerName     string            // inter.broker.listener.name

	// Log directories and topic creation.
	LogDirs                  []string // log.dirs (default: log.dir)
	NumPartitions            int      // num.partitions
	DefaultReplicationFactor int      // default.replication.factor
	AutoCreateTopicsEnable   bool     // auto.create.topics.enable
	DeleteTopicEnable        bool     // delete.topic.enable

	// Segments, indexes and flushing: the topic defaults (see TopicDefaults).
	LogSegmentBytes                         int                  // log.segment.bytes
	LogRollMs                               Millis               // log.roll.ms (default: log.roll.hours)
	LogRollJitterMs                         Millis               // log.roll.jitter.ms (default: log.roll.jitter.hours)
	LogIndexIntervalBytes                   int                  // log.index.interval.bytes
	LogIndexSizeMaxBytes                    int                  // log.index.size.max.bytes
	LogFlushIntervalMessages                int64                // log.flush.interval.messages
	LogFlushIntervalMs                      Millis               // log.flush.interval.ms (default: log.flush.scheduler.interval.ms)
	LogFlushSchedulerIntervalMs             Millis               // log.flush.scheduler.interval.ms
	LogFlushOffsetCheckpointIntervalMs      Millis               // log.flush.offset.checkpoint.interval.ms
	LogFlushStartOffsetCheckpointIntervalMs Millis               // log.flush.start.offset.checkpoint.interval.ms
	LogSegmentDeleteDelayMs                 Millis               // log.segment.delete.delay.ms
	LogPreallocate                          bool                 // log.preallocate
	LogMessageTimestampType                 record.TimestampType // log.message.timestamp.type
	LogMessageTimestampBeforeMaxMs          Millis               // log.message.timestamp.before.max.ms
	LogMessageTimestampAfterMaxMs           Millis               // log.message.timestamp.after.max.ms
	MessageMaxBytes                         int                  // message.max.bytes
	CompressionType                         string               // compression.type
	NumRecoveryThreadsPerDataDir            int                  // num.recovery.threads.per.data.dir

	// Retention.
	LogRetentionMs              Millis                // log.retention.ms (default: .minutes, then .hours; -1 unlimited)
	LogRetentionBytes           int64                 // log.retention.bytes
	LogRetentionCheckIntervalMs Millis                // log.retention.check.interval.ms
	LogCleanupPolicy            segment.CleanupPolicy // log.cleanup.policy

	// The log cleaner (compaction).
	LogCleanerEnable              bool    // log.cleaner.enable
	LogCleanerThreads             int     // log.cleaner.threads
	LogCleanerDedupeBufferSize    int64   // log.cleaner.dedupe.buffer.size
	LogCleanerIoBufferSize        int     // log.cleaner.io.buffer.size
	LogCleanerIoBufferLoadFactor  float64 // log.cleaner.io.buffer.load.factor
	LogCleanerIoMaxBytesPerSecond float64 // log.cleaner.io.max.bytes.per.second
	LogCleanerBackoffMs           Millis  // log.cleaner.backoff.ms
	LogCleanerMinCleanableRatio   float64 // log.cleaner.min.cleanable.ratio
	LogCleanerDeleteRetentionMs   Millis  // log.cleaner.delete.retention.ms
	LogCleanerMinCompactionLagMs  Millis  // log.cleaner.min.compaction.lag.ms
	LogCleanerMaxCompactionLagMs  Millis  // log.cleaner.max.compaction.lag.ms

	// Network.
	NumNetworkThreads        int    // num.network.threads
	NumIoThreads             int    // num.io.threads
	QueuedMaxRequests        int    // queued.max.requests
	QueuedMaxRequestBytes    int64  // queued.max.request.bytes
	SocketRequestMaxBytes    int    // socket.request.max.bytes
	SocketSendBufferBytes    int    // socket.send.buffer.bytes (-1: the OS default)
	SocketReceiveBufferBytes int    // socket.receive.buffer.bytes (-1: the OS default)
	SocketListenBacklogSize  int    // socket.listen.backlog.size
	ConnectionsMaxIdleMs     Millis // connections.max.idle.ms
	MaxConnections           int    // max.connections
	MaxConnectionsPerIP      int    // max.connections.per.ip
	FetchMaxBytes            int    // fetch.max.bytes

	// Connection quotas (Kafka's ConnectionQuotas, KIP-612).
	MaxConnectionsPerIPOverrides map[string]int // max.connections.per.ip.overrides: host or IP to count
	MaxConnectionCreationRate    int            // max.connection.creation.rate, per second

	// Replication.
	MinInsyncReplicas            int    // min.insync.replicas
	ReplicaLagTimeMaxMs          Millis // replica.lag.time.max.ms
	ReplicaFetchMaxBytes         int    // replica.fetch.max.bytes
	ReplicaFetchResponseMaxBytes int    // replica.fetch.response.max.bytes
	ReplicaFetchWaitMaxMs        Millis // replica.fetch.wait.max.ms
	ReplicaFetchMinBytes         int    // replica.fetch.min.bytes
	ReplicaFetchBackoffMs        Millis // replica.fetch.backoff.ms
	ReplicaSocketTimeoutMs       Millis // replica.socket.timeout.ms
	// ReplicaSelectorClass is replica.selector.class: "" (null, consumers
	// read from leaders) or RackAwareReplicaSelector (KIP-392).
	ReplicaSelectorClass                     string
	MaxIncrementalFetchSessionCacheSlots     int    // max.incremental.fetch.session.cache.slots
	MinIncrementalFetchSessionEvictionMs     Millis // min.incremental.fetch.session.eviction.ms
	NumReplicaFetchers                       int    // num.replica.fetchers
	ReplicaHighWatermarkCheckpointIntervalMs Millis // replica.high.watermark.checkpoint.interval.ms
	UncleanLeaderElectionEnable              bool   // unclean.leader.election.enable
	AutoLeaderRebalanceEnable                bool   // auto.leader.rebalance.enable
	LeaderImbalanceCheckIntervalSeconds      int64  // leader.imbalance.check.interval.seconds
	LeaderImbalancePerBrokerPercentage       int    // leader.imbalance.per.broker.percentage

	// Group coordinator and committed offsets.
	OffsetsTopicNumPartitions       int    // offsets.topic.num.partitions
	OffsetsTopicReplicationFactor   int    // offsets.topic.replication.factor
	OffsetsTopicSegmentBytes        int    // offsets.topic.segment.bytes
	OffsetsRetentionMinutes         int    // offsets.retention.minutes
	OffsetsRetentionCheckIntervalMs Millis // offsets.retention.check.interval.ms
	OffsetsCommitTimeoutMs          Millis // offsets.commit.timeout.ms
	OffsetMetadataMaxBytes          int    // offset.metadata.max.bytes
	GroupInitialRebalanceDelayMs    Millis // group.initial.rebalance.delay.ms
	GroupMinSessionTimeoutMs        Millis // group.min.session.timeout.ms
	GroupMaxSessionTimeoutMs        Millis // group.max.session.timeout.ms
	GroupMaxSize                    int    // group.max.size

	GroupConsumerSessionTimeoutMs    Millis   // group.consumer.session.timeout.ms
	GroupConsumerHeartbeatIntervalMs Millis   // group.consumer.heartbeat.interval.ms
	GroupConsumerMaxSize             int      // group.consumer.max.size
	GroupConsumerAssignors           []string // group.consumer.assignors
	GroupConsumerMigrationPolicy     string   // group.consumer.migration.policy

	// Idempotent and transactional producers.
	ProducerIDExpirationMs               Millis // producer.id.expiration.ms
	TransactionalIDExpirationMs          Millis // transactional.id.expiration.ms
	TransactionMaxTimeoutMs              Millis // transaction.max.timeout.ms
	TransactionStateLogNumPartitions     int    // transaction.state.log.num.partitions
	TransactionStateLogReplicationFactor int    // transaction.state.log.replication.factor
	TransactionStateLogMinIsr            int    // transaction.state.log.min.isr
	TransactionStateLogSegmentBytes      int    // transaction.state.log.segment.bytes

	// Controller mutation quotas.
	ControllerQuotaWindowNum         int // controller.quota.window.num
	ControllerQuotaWindowSizeSeconds int // controller.quota.window.size.seconds

	// Client quotas (KIP-13, KIP-124): the samples a client's rate is
	// measured over.
	QuotaWindowNum         int // quota.window.num
	QuotaWindowSizeSeconds int // quota.window.size.seconds

	// Moves between log dirs (AlterReplicaLogDirs): the copy's byte rate
	// and the samples it is measured over.
	ReplicaAlterLogDirsIoMaxBytesPerSecond        int64 // replica.alter.log.dirs.io.max.bytes.per.second
	AlterLogDirsReplicationQuotaWindowNum         int   // alter.log.dirs.replication.quota.window.num
	AlterLogDirsReplicationQuotaWindowSizeSeconds int   // alter.log.dirs.replication.quota.window.size.seconds
	// Replication quotas (KIP-73).
	ReplicationQuotaWindowNum         int   // replication.quota.window.num
	ReplicationQuotaWindowSizeSeconds int   // replication.quota.window.size.seconds
	LeaderReplicationThrottledRate    int64 // leader.replication.throttled.rate, bytes/s
	FollowerReplicationThrottledRate  int64 // follower.replication.throttled.rate, bytes/s

	// Security (per listener: Security).
	ConnectionFailedAuthenticationDelayMs Millis // connection.failed.authentication.delay.ms
	ConnectionsMaxReauthMs                Millis // connections.max.reauth.ms: 0, sessions never expire

	// Authorization: on when AuthorizerClassName is StandardAuthorizer.
	AuthorizerClassName       string // authorizer.class.name; "" (off) or StandardAuthorizer
	SuperUsers                string // super.users: principals separated by ";"
	AllowEveryoneIfNoACLFound bool   // allow.everyone.if.no.acl.found

	// Varve's own (not Kafka's).
	ControllerMutationRate float64 // varve.controller.mutation.rate: partitions per second; 0: unbounded
	LogDirProbeIntervalMs  Millis  // varve.log.dir.probe.interval.ms: probe period of an offline log dir
	MetricsListener        string  // varve.metrics.listener: HTTP address for Prometheus metrics; empty: off
	NetworkModel           string  // varve.network.model: reactor, goroutine or goroutine-inline
	QuorumLearnerListener  string  // varve.quorum.learner.listener: a broker-only node's raft listener, host:port

	// Secondary properties, read only to derive the fields above.
	brokerID                    int
	logDir                      string
	logRollHours                int
	logRollJitterHours          int
	logRetentionMinutes         int
	logRetentionHours           int
	securityInterBrokerProtocol string

	set      map[string]string            // properties given explicitly, trimmed
	other    map[string]any               // accepted properties without a field
	perLstnr map[string]map[string]string // listener.name.<l>.<rest>: lower-case listener -> rest -> value, trimmed

	given map[string]string // every property as given to Parse, listener ones included
	dyn   *dynamicState     // the layers of WithDynamic; nil: static only (dynamic.go)
}

// Network models for varve.network.model.
const (
	NetworkReactor         = "reactor"
	NetworkGoroutine       = "goroutine"
	NetworkGoroutineInline = "goroutine-inline"
)

var brokerIndex = sync.OnceValue(func() index[def] {
	return newIndex(brokerDefs, func(d *def) string { return d.name })
})

// Parse builds a Broker from properties (a parsed server.properties plus
// any overrides). Every name must be known: an unknown one is an error
// naming it (Kafka only warns; Varve refuses, so a typo does not silently
// leave a default in place). A bad value is an error naming the property,
// the value and what was expected. All problems are reported together,
// joined; each is a *PropertyError.
func Parse(props map[string]string) (*Broker, error) {
	ix := brokerIndex()
	given := maps.Clone(props)
	props, perListener, errs := splitListenerProps(props)
	if err := unknownNames(props, ix.names, "broker"); err != nil {
		return nil, errors.Join(append(errs, err)...)
	}
	b := &Broker{set: trimmed(props), other: map[string]any{}, perLstnr: perListener, given: given}
	for i := range brokerDefs {
		if err := b.load(&brokerDefs[i]); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if err := b.derive(); err != nil {
		return nil, err
	}
	if err := b.validate(); err != nil {
		return nil, err
	}
	if _, err := b.buildTopicDefaults(); err != nil {
		return nil, err
	}
	return b, nil
}

// load parses d's value (given or default) into its place.
func (b *Broker) load(d *def) error {
	raw, given := b.set[d.name]
	if !given && d.null {
		return nil
	}
	if !given {
		raw = d.deflt
	}
	v, err := d.value(raw)
	if err != nil {
		return err
	}
	if d.field != nil {
		setField(d.field(b), v)
	} else {
		b.other[d.name] = v
	}
	return nil
}

// ParseFile reads a server.properties file and applies overrides, each
// "key=value" as kafka-server-start.sh's --override takes them; an
// override wins over the file. An empty path means no file: defaults and
// overrides only.
func ParseFile(path string, overrides []string) (*Broker, error) {
	props := map[string]string{}
	if path != "" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		props, err = ReadProperties(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("config: read %s: %w", path, err)
		}
	}
	for _, o := range overrides {
		k, v, ok := strings.Cut(o, "=")
		if k = strings.TrimSpace(k); !ok || k == "" {
			return nil, fmt.Errorf("config: override %q: %w: expected key=value", o, ErrSyntax)
		}
		props[k] = v
	}
	b, err := Parse(props)
	if err != nil && path != "" {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, err
}

// Default is the configuration `varve server` runs with when given no
// file and no overrides: Kafka's defaults, except where doc.go says
// Varve's differ (a single node on 127.0.0.1:9092 keeping its data in
// ./varve-data).
func Default() *Broker {
	b, err := Parse(nil)
	if err != nil {
		// The definitions table is wrong; TestDefault catches this.
		panic("config: the built-in defaults do not parse: " + err.Error())
	}
	return b
}

// Get returns a property's effective value as Kafka's DescribeConfigs
// shows it: the value given, or the default, or (for a property whose
// Kafka default is null) the value derived from its synonyms. A null
// property with nothing to derive from shows as "". ok is false for an
// unknown name.
func (b *Broker) Get(name string) (value string, ok bool) {
	d := brokerIndex().byName[name]
	if d == nil {
		return "", false
	}
	if _, given := b.set[name]; d.typ == tPassword || d.null && !given && !d.derived {
		return "", true // a password shows as null, as DescribeConfigs hides it
	}
	if d.field != nil {
		return d.typ.format(reflect.ValueOf(d.field(b)).Elem()), true
	}
	v, found := b.other[name]
	if !found {
		return "", true
	}
	return formatValue(d.typ, v), true
}

// IsSensitive reports whether name is a password-typed property (a key,
// a password, a JAAS configuration): DescribeConfigs shows it as null,
// marked sensitive, as Kafka does.
func (b *Broker) IsSensitive(name string) bool {
	d := brokerIndex().byName[name]
	return d != nil && d.typ == tPassword
}

// Names lists every broker property Varve knows, sorted.
func (b *Broker) Names() []string { return append([]string(nil), brokerIndex().names...) }

// IsDefault reports whether name was not given explicitly (in the file or
// an override). A derived property, such as log.retention.ms when only
// log.retention.hours is given, counts as not given.
func (b *Broker) IsDefault(name string) bool {
	_, given := b.set[name]
	return !given
}

// isSet reports whether name was given explicitly.
func (b *Broker) isSet(name string) bool { return !b.IsDefault(name) }

// HasRole reports whether process.roles holds role ("broker" or
// "controller").
func (b *Broker) HasRole(role string) bool {
	for _, r := range b.ProcessRoles {
		if r == role {
			return true
		}
	}
	return false
}

// SecurityProtocol is the protocol listener.security.protocol.map gives a
// listener name. As in Kafka 4, a controller listener absent from the map
// is PLAINTEXT.
func (b *Broker) SecurityProtocol(listener string) (string, bool) {
	for _, m := range b.ListenerSecurityProtocolMap {
		if m.Listener == listener {
			return m.Protocol, true
		}
	}
	if b.isControllerListener(listener) {
		return "PLAINTEXT", true
	}
	return "", false
}

func (b *Broker) isControllerListener(name string) bool {
	for _, n := range b.ControllerListenerNames {
		if strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}
