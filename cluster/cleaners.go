package cluster

import (
	"context"

	"github.com/varve/varve/compaction"
	"github.com/varve/varve/retention"
	"github.com/varve/varve/segment"
)

// cleaners are the node's background log maintenance: Kafka's
// kafka-log-retention task and its log cleaner threads, over every
// partition, each log judged by its topic's configuration.
type cleaners struct {
	retention *retention.Scheduler
	cleaner   *compaction.Cleaner
	cancel    context.CancelFunc
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
	c := &cleaners{cancel: cancel}
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
	if b.cfg.CleanerEnabled() {
		cc := b.cfg.CleanerConfig()
		cc.UpperBound, cc.Logger = b.upperBound, b.log
		cl, err := compaction.NewCleaner(cc, b.compactionTargets)
		if err == nil {
			err = cl.Start(ctx)
		}
		if err != nil {
			b.log.Error("log cleaner not started", "err", err)
		} else {
			c.cleaner = cl
		}
	}
	b.cleaners = c
}

func (b *Broker) compactionTargets() []compaction.Target {
	var out []compaction.Target
	for _, l := range b.parts.Logs() {
		tc := b.topicConfig(l.TopicPartition().Topic)
		pol := tc.RetentionPolicy()
		if !pol.CleanupPolicy.Compact() {
			continue
		}
		ct := tc.CompactionTopicConfig()
		out = append(out, compaction.Target{Log: l, Retention: pol, Topic: &ct})
	}
	return out
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
	if c.cleaner != nil {
		c.cleaner.Stop()
	}
}
