package config

import (
	"time"

	"github.com/varve/varve/compaction"
	"github.com/varve/varve/record"
	"github.com/varve/varve/retention"
	"github.com/varve/varve/segment"
)

// The conversions from properties to the storage packages' configs.
// Those packages take every value as given, zero included, so each
// property maps onto its field one to one; the cases below are only
// where Kafka's value does not fit the field's type (Long.MAX_VALUE
// milliseconds past a time.Duration) or Kafka derives one setting from
// another. The broker's other conversions (net, replica, group) are in
// package cluster: config sits below those packages (see doc.go).

// SegmentConfig maps the segment-level settings onto segment.Config:
// segment.bytes, segment.ms (capped by max.compaction.lag.ms on a
// compacted topic, as Kafka's LogConfig.maxSegmentMs), segment.jitter.ms,
// index.interval.bytes, segment.index.bytes, flush.messages, flush.ms,
// max.message.bytes and file.delete.delay.ms. ProducerIDExpiration is
// segment's default (producer.id.expiration.ms is a broker property:
// Broker.LogConfig sets it); FS, Logger, Now, OnFlush and Managed are
// left for the caller.
func (t Topic) SegmentConfig() segment.Config {
	t = t.resolved()
	c := segment.DefaultConfig()
	c.SegmentBytes = int64(t.segmentBytes)
	c.SegmentMs = t.segmentMs.Duration()
	c.SegmentJitterMs = t.segmentJitterMs.Duration()
	c.IndexIntervalBytes = t.indexIntervalBytes
	c.SegmentIndexBytes = t.segmentIndexBytes
	c.FlushMessages = t.flushMessages
	c.FlushMs = t.flushMs.Duration()
	c.MaxMessageBytes = t.maxMessageBytes
	c.FileDeleteDelay = t.fileDeleteDelayMs.Duration()
	if t.cleanupPolicy.Compact() && t.maxCompactionLagMs < t.segmentMs {
		c.SegmentMs = t.maxCompactionLagMs.Duration()
	}
	return c
}

// LogConfig is a topic's segment.Config on this broker: SegmentConfig
// plus producer.id.expiration.ms.
func (b *Broker) LogConfig(t Topic) segment.Config {
	c := t.SegmentConfig()
	c.ProducerIDExpiration = b.ProducerIDExpirationMs.Duration()
	return c
}

// RetentionPolicy maps cleanup.policy, retention.ms and retention.bytes
// onto retention.Policy, value for value: Kafka's -1 is
// retention.Unlimited, and retention.bytes=0 deletes every segment.
func (t Topic) RetentionPolicy() retention.Policy {
	t = t.resolved()
	p := retention.Policy{
		CleanupPolicy:  t.cleanupPolicy,
		RetentionMs:    t.retentionMs.Duration(),
		RetentionBytes: t.retentionBytes,
	}
	if t.retentionMs < 0 {
		p.RetentionMs = retention.Unlimited
	}
	if t.retentionBytes < 0 {
		p.RetentionBytes = retention.Unlimited
	}
	return p
}

// CompactionTopicConfig maps min.cleanable.dirty.ratio,
// min.compaction.lag.ms, max.compaction.lag.ms and delete.retention.ms
// onto compaction.TopicConfig, for a compaction.Target.
func (t Topic) CompactionTopicConfig() compaction.TopicConfig {
	t = t.resolved()
	return compaction.TopicConfig{
		MinCleanableDirtyRatio: t.minCleanableDirtyRatio,
		MinCompactionLag:       t.minCompactionLagMs.Duration(),
		MaxCompactionLag:       t.maxCompactionLagMs.Duration(),
		DeleteRetention:        t.deleteRetentionMs.Duration(),
	}
}

// CompactionConfig is compaction's DefaultConfig with this topic's
// topic-level settings, for one compaction.Clean. A broker running one
// Cleaner for all logs uses Broker.CleanerConfig and gives each log its
// CompactionTopicConfig.
func (t Topic) CompactionConfig() compaction.Config {
	c := compaction.DefaultConfig()
	c.TopicConfig = t.CompactionTopicConfig()
	return c
}

// CleanupPolicy reports whether cleanup.policy holds delete and compact.
func (t Topic) CleanupPolicy() (deletePolicy, compact bool) {
	p := t.resolved().cleanupPolicy
	return p.Delete(), p.Compact()
}

// MessageTimestampType is message.timestamp.type.
func (t Topic) MessageTimestampType() record.TimestampType {
	return t.resolved().messageTimestampType
}

// MessageTimestampBeforeMax and MessageTimestampAfterMax are
// message.timestamp.before.max.ms and message.timestamp.after.max.ms: how
// far a CreateTime timestamp may lie before or after the broker's clock.
func (t Topic) MessageTimestampBeforeMax() time.Duration {
	return t.resolved().messageTimestampBeforeMaxMs.Duration()
}

// MessageTimestampAfterMax: see MessageTimestampBeforeMax.
func (t Topic) MessageTimestampAfterMax() time.Duration {
	return t.resolved().messageTimestampAfterMaxMs.Duration()
}

// MinInsyncReplicas is min.insync.replicas.
func (t Topic) MinInsyncReplicas() int { return t.resolved().minInsyncReplicas }

// MaxMessageBytes is max.message.bytes.
func (t Topic) MaxMessageBytes() int { return t.resolved().maxMessageBytes }

// UncleanLeaderElectionEnable is unclean.leader.election.enable.
func (t Topic) UncleanLeaderElectionEnable() bool {
	return t.resolved().uncleanLeaderElectionEnable
}

// Preallocate is preallocate.
func (t Topic) Preallocate() bool { return t.resolved().preallocate }

// Compression is compression.type: the codec the broker writes with, or
// producer=true to keep each batch as the producer compressed it.
func (t Topic) Compression() (codec record.Compression, producer bool) {
	switch ct := t.resolved().compressionType; ct {
	case "producer":
		return record.CompressionNone, true
	case "uncompressed":
		return record.CompressionNone, false
	default:
		c, _ := record.ParseCompression(ct)
		return c, false
	}
}

// CleanerEnabled reports whether the broker runs a log cleaner: Kafka
// runs none when log.cleaner.enable is false or log.cleaner.threads is 0.
func (b *Broker) CleanerEnabled() bool { return b.LogCleanerEnable && b.LogCleanerThreads > 0 }

// CleanerConfig maps log.cleaner.* onto compaction.Config, with the
// broker's topic defaults as its TopicConfig. One case differs from
// Kafka: log.cleaner.backoff.ms=0 becomes 1 ms, because a worker with
// nothing to clean must not spin on the CPU (Kafka's would). Call it only
// when CleanerEnabled (compaction needs at least one thread).
func (b *Broker) CleanerConfig() compaction.Config {
	c := compaction.DefaultConfig()
	c.TopicConfig = b.TopicDefaults().CompactionTopicConfig()
	c.DedupeBufferSize = b.LogCleanerDedupeBufferSize
	c.IOBufferLoadFactor = b.LogCleanerIoBufferLoadFactor
	c.IOBufferSize = b.LogCleanerIoBufferSize
	c.Threads = b.LogCleanerThreads
	c.MaxIOBytesPerSecond = b.LogCleanerIoMaxBytesPerSecond
	c.Backoff = max(b.LogCleanerBackoffMs.Duration(), time.Millisecond)
	return c
}
