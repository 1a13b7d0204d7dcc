package controller

import (
	"fmt"

	"github.com/varve/varve/internal/invariants"
	"github.com/varve/varve/internal/kuuid"
	"github.com/varve/varve/metadata"
)

// Config holds the controller's settings, under Kafka's property names.
type Config struct {
	// SessionTimeoutMs is broker.session.timeout.ms (9000): a broker
	// without a heartbeat for longer is fenced.
	SessionTimeoutMs int64
	// UncleanLeaderElection is unclean.leader.election.enable (false),
	// the cluster default; a topic's own override wins.
	UncleanLeaderElection bool
	// AutoLeaderRebalance is auto.leader.rebalance.enable (true).
	AutoLeaderRebalance bool
	// LeaderImbalanceCheckIntervalMs is
	// leader.imbalance.check.interval.seconds (300) in milliseconds.
	LeaderImbalanceCheckIntervalMs int64
	// LeaderImbalancePerBrokerPercentage is
	// leader.imbalance.per.broker.percentage (10).
	LeaderImbalancePerBrokerPercentage int
	// DefaultReplicationFactor is default.replication.factor (1), used
	// when CreateTopics asks for -1.
	DefaultReplicationFactor int16
	// NumPartitions is num.partitions (1), used when CreateTopics asks
	// for -1.
	NumPartitions int32
	// TopicSettings validates a topic's configuration overrides and
	// resolves its settings over the cluster's defaults (package
	// config's Broker.ParseTopic); nil accepts any override, as a
	// setting with no default. IncrementalAlterConfigs uses it.
	TopicSettings func(overrides map[string]string) (TopicSettings, error)
	// BrokerSettings checks the dynamic broker settings a change sets,
	// on one node (perNode) or as the cluster default (package
	// config's CheckDynamic); nil accepts any.
	BrokerSettings func(set map[string]string, perNode bool) error
	// NewTopicID returns a fresh topic id: random version 4 UUIDs by
	// default, a counter in tests.
	NewTopicID func() metadata.TopicID
}

// ProducerIDBlockSize is the number of producer ids AllocateProducerIds
// hands out at once. Kafka: ProducerIdManager's PID_BLOCK_SIZE (1000).
const ProducerIDBlockSize = 1000

// DefaultConfig returns Kafka's defaults. (Brokers heartbeat every
// broker.heartbeat.interval.ms, 2000 by default: a broker's setting,
// which the controller does not need.)
func DefaultConfig() Config {
	return Config{
		NewTopicID:                         randomTopicID,
		SessionTimeoutMs:                   9000,
		AutoLeaderRebalance:                true,
		LeaderImbalanceCheckIntervalMs:     300_000,
		LeaderImbalancePerBrokerPercentage: 10,
		DefaultReplicationFactor:           1,
		NumPartitions:                      1,
	}
}

// Controller decides the cluster's metadata changes. See the package
// documentation for the loop that drives it.
type Controller struct {
	cfg Config
	img *metadata.Image // committed records and the ones proposed since
	end int64           // the log offset the next record gets

	sessions       map[int32]*session // soft state, rebuilt from heartbeats
	placeCursor    int                // where the next placement starts (soft)
	nextBalanceMs  int64              // when the next imbalance check runs (soft)
	shutdownOffset map[int32]int64    // offset of each controlled shutdown's records (soft)
}

// session is what the controller knows of a broker's liveness.
type session struct {
	lastContactMs  int64
	metadataOffset int64 // the metadata offset its last heartbeat carried; -1 before one
}

// New returns the controller of img, whose records end before the log
// offset end (the next record written gets offset end). now is the
// time in ms: every registered broker's session starts then, as Kafka's
// new active controller starts its heartbeat timers afresh.
func New(cfg Config, img *metadata.Image, end, now int64) *Controller {
	c := &Controller{cfg: cfg, img: img, end: end,
		sessions: map[int32]*session{}, shutdownOffset: map[int32]int64{},
		nextBalanceMs: now + cfg.LeaderImbalanceCheckIntervalMs}
	for _, b := range img.Brokers() {
		c.sessions[b.ID] = &session{lastContactMs: now, metadataOffset: -1}
	}
	return c
}

// Image is the image with every record the controller has produced.
func (c *Controller) Image() *metadata.Image { return c.img }

// EndOffset is the log offset the next record will get.
func (c *Controller) EndOffset() int64 { return c.end }

// propose applies recs to the controller's image, as Kafka's active
// controller replays its records as it writes them. An error means the
// controller produced records its own image refuses: a bug, reported
// rather than hidden. On builds with invariants.Enabled the image after
// recs must satisfy checkImage.
func (c *Controller) propose(recs []metadata.Record) error {
	if err := c.proposePart(recs); err != nil {
		return err
	}
	if invariants.Enabled {
		if err := checkImage(c.img); err != nil {
			return fmt.Errorf("controller: records before offset %d break an invariant: %w", c.end, err)
		}
	}
	return nil
}

// proposePart applies the first part of a list of records whose
// invariants hold only once the rest is applied too (a broker fenced
// before its leaderships move).
func (c *Controller) proposePart(recs []metadata.Record) error {
	if len(recs) == 0 {
		return nil
	}
	next, err := metadata.Apply(c.img, recs...)
	if err != nil {
		return fmt.Errorf("controller: records at offset %d: %w", c.end, err)
	}
	c.img = next
	c.end += int64(len(recs))
	return nil
}

// randomTopicID is Kafka's Uuid.randomUuid.
func randomTopicID() metadata.TopicID { return kuuid.Random() }
