package group

import (
	"crypto/rand"
	"fmt"
	"log/slog"
	"math"
	"time"
)

// Kafka's defaults for the coordinator's settings.
const (
	DefaultInitialRebalanceDelay  = 3 * time.Second    // group.initial.rebalance.delay.ms
	DefaultMinSessionTimeout      = 6 * time.Second    // group.min.session.timeout.ms
	DefaultMaxSessionTimeout      = 30 * time.Minute   // group.max.session.timeout.ms
	DefaultOffsetsRetention       = 7 * 24 * time.Hour // offsets.retention.minutes = 10080
	DefaultRetentionCheckInterval = 10 * time.Minute   // offsets.retention.check.interval.ms
	DefaultOffsetMetadataMaxBytes = 4096               // offset.metadata.max.bytes
	DefaultMaxSize                = math.MaxInt32      // group.max.size
	NewMemberJoinTimeout          = 5 * time.Minute    // GroupCoordinator.NewMemberJoinTimeoutMs
)

// Config is a coordinator's settings: Kafka's group.* and offsets.*
// properties, and the seams that keep it deterministic.
type Config struct {
	InitialRebalanceDelay  time.Duration // group.initial.rebalance.delay.ms; 0 is allowed (tests)
	MinSessionTimeout      time.Duration // group.min.session.timeout.ms
	MaxSessionTimeout      time.Duration // group.max.session.timeout.ms
	MaxSize                int           // group.max.size
	OffsetsRetention       time.Duration // offsets.retention.minutes
	RetentionCheckInterval time.Duration // offsets.retention.check.interval.ms
	OffsetMetadataMaxBytes int           // offset.metadata.max.bytes

	// MaxGroupMetadataBytes bounds the member metadata one group holds
	// (Varve's own; bound.go); 0 uses DefaultMaxGroupMetadataBytes.
	MaxGroupMetadataBytes int64
	// MetadataBudget is the broker-wide bound on member metadata, shared
	// by every coordinator of the broker (bound.go). Nil gives the
	// coordinator a budget of its own of DefaultMaxBrokerMetadataBytes.
	MetadataBudget *MetadataBudget

	// The KIP-848 consumer group settings (consumer.go).
	ConsumerSessionTimeout    time.Duration // group.consumer.session.timeout.ms
	ConsumerHeartbeatInterval time.Duration // group.consumer.heartbeat.interval.ms
	ConsumerMaxSize           int           // group.consumer.max.size
	ConsumerAssignors         []string      // group.consumer.assignors: uniform, range; the first is the default
	// MigrationPolicy is group.consumer.migration.policy: whether classic
	// groups with members are upgraded to consumer groups and back
	// (consumer_migrate.go); "" is Kafka's default, bidirectional.
	MigrationPolicy string
	// Topics resolves topic names and ids for the server-side assignors;
	// nil knows no topic (nothing is assigned).
	Topics Topics

	// KnownPartition reports whether a topic partition exists; commits to
	// others get UNKNOWN_TOPIC_OR_PARTITION. Nil accepts every partition.
	KnownPartition func(topic string, partition int32) bool
	// NewUUID makes the random part of member ids. Nil uses random
	// version-4 UUIDs in Java's text form; tests pass a counter.
	NewUUID func() string
	Logger  *slog.Logger
}

// withDefaults fills unset fields with Kafka's defaults.
func (c Config) withDefaults() Config {
	if c.MinSessionTimeout <= 0 {
		c.MinSessionTimeout = DefaultMinSessionTimeout
	}
	if c.MaxSessionTimeout <= 0 {
		c.MaxSessionTimeout = DefaultMaxSessionTimeout
	}
	if c.MaxSize <= 0 {
		c.MaxSize = DefaultMaxSize
	}
	if c.OffsetsRetention <= 0 {
		c.OffsetsRetention = DefaultOffsetsRetention
	}
	if c.RetentionCheckInterval <= 0 {
		c.RetentionCheckInterval = DefaultRetentionCheckInterval
	}
	if c.OffsetMetadataMaxBytes <= 0 {
		c.OffsetMetadataMaxBytes = DefaultOffsetMetadataMaxBytes
	}
	if c.MaxGroupMetadataBytes <= 0 {
		c.MaxGroupMetadataBytes = DefaultMaxGroupMetadataBytes
	}
	if c.MetadataBudget == nil {
		c.MetadataBudget = NewMetadataBudget(DefaultMaxBrokerMetadataBytes)
	}
	if c.InitialRebalanceDelay < 0 {
		c.InitialRebalanceDelay = 0
	}
	if c.ConsumerSessionTimeout <= 0 {
		c.ConsumerSessionTimeout = DefaultConsumerSessionTimeout
	}
	if c.ConsumerHeartbeatInterval <= 0 {
		c.ConsumerHeartbeatInterval = DefaultConsumerHeartbeatInterval
	}
	if c.ConsumerMaxSize <= 0 {
		c.ConsumerMaxSize = DefaultConsumerMaxSize
	}
	if c.MigrationPolicy == "" {
		c.MigrationPolicy = MigrationBidirectional
	}
	if len(c.ConsumerAssignors) == 0 {
		c.ConsumerAssignors = DefaultConsumerAssignors
	}
	if c.NewUUID == nil {
		c.NewUUID = randomUUID
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// randomUUID is java.util.UUID.randomUUID().toString().
func randomUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
