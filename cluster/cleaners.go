package cluster

import (
	"context"
	"sync"
	"time"

	"github.com/varve/varve/compaction"
	"github.com/varve/varve/config"
	"github.com/varve/varve/retention"
	"github.com/varve/varve/segment"
)

// cleaners are the node's background log maintenance: Kafka's
// kafka-log-retention task and its log cleaner threads, over every
// partition, each log judged by its topic's configuration.
type cleaners struct {
	retention *retention.Scheduler
	ctx       context.Context
	cancel    context.CancelFunc

	mu      sync.Mutex          // guards cleaner: dynamic configuration replaces it
	cleaner *compaction.Cleaner // REQUIRES mu
	stopped bool                // REQUIRES mu
}

// partitionOf maps a log back to its partition for the high watermark.
func (b *Broker) upperBound(l *segment.Log) int64 {
	if p, ok := b.parts.Partition(l.TopicPartition()); ok {
		return p.HighWatermark()
	}
	return l.StartOffset()
}

func (b *Broker) logs() []*segment.Log { return b.parts.Logs() }

func (b *Broker) startCleaners() {
	ctx, cancel := context.WithCancel(context.Background())
	c := &cleaners{ctx: ctx, cancel: cancel}
	rs, err := retention.NewScheduler(retention.SchedulerConfig{
		CheckInterval: b.cfg.LogRetentionCheckIntervalMs.Duration(),
		Logs:          b.logs,
		Policy: func(l *segment.Log) retention.Policy {
			return b.topicConfig(l.TopicPartition().Topic).RetentionPolicy()
		},
		UpperBound: b.upperBound,
		Logger:     b.log,
	})
	if err == nil {
		err = rs.Start(ctx)
	}
	if err != nil {
		b.log.Error("retention scheduler not started", "err", err)
	} else {
		c.retention = rs
	}
	// Under the dynamic configuration's lock: a change applied from now
	// on finds these cleaners and restarts them (broker_config.go).
	b.dyn.applyMu.Lock()
	c.mu.Lock()
	c.cleaner = b.startCleaner(ctx, b.appliedConfig())
	c.mu.Unlock()
	b.dyn.cleaners = c
	b.dyn.applyMu.Unlock()
	b.cleaners = c
}

// startCleaner starts the log cleaner cfg describes; nil when cfg turns
// it off (or it fails to start, which is logged).
func (b *Broker) startCleaner(ctx context.Context, cfg *config.Broker) *compaction.Cleaner {
	if !cfg.CleanerEnabled() {
		return nil
	}
	cc := cfg.CleanerConfig()
	cc.UpperBound, cc.Logger = b.upperBound, b.log
	cl, err := compaction.NewCleaner(cc, b.compactionTargets)
	if err == nil {
		err = cl.Start(ctx)
	}
	if err != nil {
		b.log.Error("log cleaner not started", "err", err)
		return nil
	}
	return cl
}

// compactionTargets lists the logs whose cleanup.policy includes compact,
// each with its topic's compaction settings and its retention: the node
// composes Kafka's cleaner-thread round, clean then delete, from the two
// packages, which know nothing of each other.
func (b *Broker) compactionTargets() []compaction.Target {
	var out []compaction.Target
	for _, l := range b.parts.Logs() {
		tc := b.topicConfig(l.TopicPartition().Topic)
		pol := tc.RetentionPolicy()
		if !pol.CleanupPolicy.Compact() || b.parts.LogDirs().Moving(l.TopicPartition()) {
			continue // Kafka pauses the cleaning of a partition moving between log dirs
		}
		ct := tc.CompactionTopicConfig()
		out = append(out, compaction.Target{Log: l, Topic: &ct, Retain: b.retainCompacted(pol)})
	}
	return out
}

// retainCompacted is the retention a cleaner worker applies to a
// compacted log after its round (Kafka: LogCleanerManager.deletableLogs,
// then deleteOldSegments): the log-start-offset rule for compact, every
// rule for compact,delete, as retention.Enforce reads the policy.
func (b *Broker) retainCompacted(pol retention.Policy) func(*segment.Log, int64, time.Time) error {
	return func(l *segment.Log, upperBound int64, now time.Time) error {
		r, err := retention.Enforce(l, pol, upperBound, now)
		if len(r.Deleted) > 0 {
			b.log.Info("deleted segments of a compacted log by retention", "dir", l.Dir(),
				"segments", len(r.Deleted), "log_start_offset", r.StartOffset)
		}
		return err
	}
}

func (b *Broker) stopCleaners() {
	c := b.cleaners
	if c == nil {
		return
	}
	c.cancel()
	if c.retention != nil {
		c.retention.Stop()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	if c.cleaner != nil {
		c.cleaner.Stop()
	}
}
