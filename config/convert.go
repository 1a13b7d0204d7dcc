package config

import (
	"math"
	"time"

	"github.com/varve/varve/compaction"
	"github.com/varve/varve/record"
	"github.com/varve/varve/retention"
	"github.com/varve/varve/segment"
)

// The storage packages read a zero field as "Kafka's default". Where
// Kafka gives 0 its own meaning, the conversions below pick the nearest
// value the storage packages can express; each case says so.

// SegmentConfig maps the segment-level settings onto segment.Config:
// segment.bytes, segment.ms (capped by max.compaction.lag.ms on a
// compacted topic, as Kafka's LogConfig.maxSegmentMs), segment.jitter.ms,
// index.interval.bytes, segment.index.bytes, flush.messages, flush.ms,
// max.message.bytes and file.delete.delay.ms. FS, Logger, Now and Managed
// are left for the caller.
func (t Topic) SegmentConfig() segment.Config {
	t = t.resolved()
	c := segment.Config{
		SegmentBytes:       int64(t.segmentBytes),
		SegmentMs:          t.segmentMs.Duration(),
		SegmentJitterMs:    t.segmentJitterMs.Duration(),
		IndexIntervalBytes: t.indexIntervalBytes,
		SegmentIndexBytes:  t.segmentIndexBytes,
		FlushMessages:      t.flushMessages,
		FlushMs:            flushInterval(t.flushMs),
		MaxMessageBytes:    t.maxMessageBytes,
		FileDeleteDelay:    t.fileDeleteDelayMs.Duration(),
	}
	if t.cleanupPolicy.Compact() && t.maxCompactionLagMs < t.segmentMs {
		c.SegmentMs = t.maxCompactionLagMs.Duration()
	}
	// Kafka's index.interval.bytes=0 indexes every batch; segment reads 0
	// as 4096, and 1 indexes every batch (a batch is at least 61 bytes).
	if c.IndexIntervalBytes == 0 {
		c.IndexIntervalBytes = 1
	}
	// flush.ms=0: no message may wait for a flush, so flush on every
	// append (segment reads FlushMs 0 as "never").
	if t.flushMs == 0 {
		c.FlushMessages = 1
	}
	// file.delete.delay.ms=0: delete at once (segment reads 0 as 60 s).
	if c.FileDeleteDelay == 0 {
		c.FileDeleteDelay = time.Nanosecond
	}
	return c
}

// flushInterval is flush.ms for segment.Config: 0 (never) for Kafka's
// Long.MAX_VALUE and anything past time.Duration's range.
func flushInterval(ms Millis) time.Duration {
	if d := ms.Duration(); d > 0 && d < math.MaxInt64 {
		return d
	}
	return 0
}

// RetentionPolicy maps cleanup.policy, retention.ms and retention.bytes
// onto retention.Policy. Kafka's -1 is retention.Unlimited. Kafka's
// retention.ms=0 becomes 1 ns, which retention compares in whole
// milliseconds as 0. Kafka's retention.bytes=0 becomes 1 byte, because
// retention.Policy reads 0 as its default: the log then keeps its last
// non-empty segment, where Kafka would delete that one too.
func (t Topic) RetentionPolicy() retention.Policy {
	t = t.resolved()
	p := retention.Policy{
		CleanupPolicy:  t.cleanupPolicy,
		RetentionMs:    t.retentionMs.Duration(),
		RetentionBytes: t.retentionBytes,
	}
	switch {
	case t.retentionMs < 0:
		p.RetentionMs = retention.Unlimited
	case t.retentionMs == 0:
		p.RetentionMs = time.Nanosecond
	}
	switch {
	case t.retentionBytes < 0:
		p.RetentionBytes = retention.Unlimited
	case t.retentionBytes == 0:
		p.RetentionBytes = 1
	}
	return p
}

// CompactionTopicConfig maps min.cleanable.dirty.ratio,
// min.compaction.lag.ms, max.compaction.lag.ms and delete.retention.ms
// onto compaction.TopicConfig, for a compaction.Target. Kafka's ratio 0
// ("any dirty byte") becomes the smallest positive float and
// delete.retention.ms=0 becomes 1 ns, because compaction reads 0 as its
// defaults.
func (t Topic) CompactionTopicConfig() compaction.TopicConfig {
	t = t.resolved()
	c := compaction.TopicConfig{
		MinCleanableDirtyRatio: t.minCleanableDirtyRatio,
		MinCompactionLag:       t.minCompactionLagMs.Duration(),
		MaxCompactionLag:       t.maxCompactionLagMs.Duration(),
		DeleteRetention:        t.deleteRetentionMs.Duration(),
	}
	if c.MinCleanableDirtyRatio == 0 {
		c.MinCleanableDirtyRatio = math.SmallestNonzeroFloat64
	}
	if c.DeleteRetention == 0 {
		c.DeleteRetention = time.Nanosecond
	}
	return c
}

// CompactionConfig is a compaction.Config whose topic-level settings are
// this topic's; the cleaner-wide fields are left zero (compaction's
// defaults). A broker running one Cleaner for all logs uses
// Broker.CleanerConfig and gives each log its CompactionTopicConfig.
func (t Topic) CompactionConfig() compaction.Config {
	return compaction.Config{TopicConfig: t.CompactionTopicConfig()}
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
// broker's topic defaults as its TopicConfig. Kafka's
// log.cleaner.backoff.ms=0 becomes 1 ms (compaction reads 0 as 15 s, and
// a worker must not spin), log.cleaner.io.buffer.size=0 becomes 1 (each
// worker then reads in compaction's smallest chunk), and Kafka's
// unlimited Double.MAX_VALUE bytes per second is compaction's 0. Call it
// only when CleanerEnabled.
func (b *Broker) CleanerConfig() compaction.Config {
	c := compaction.Config{
		TopicConfig:         b.TopicDefaults().CompactionTopicConfig(),
		DedupeBufferSize:    b.LogCleanerDedupeBufferSize,
		IOBufferLoadFactor:  b.LogCleanerIoBufferLoadFactor,
		IOBufferSize:        max(b.LogCleanerIoBufferSize, 1),
		Threads:             max(b.LogCleanerThreads, 1),
		MaxIOBytesPerSecond: b.LogCleanerIoMaxBytesPerSecond,
		Backoff:             max(b.LogCleanerBackoffMs.Duration(), time.Millisecond),
	}
	if c.MaxIOBytesPerSecond >= math.MaxFloat64 {
		c.MaxIOBytesPerSecond = 0
	}
	return c
}
