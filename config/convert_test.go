package config

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/varve/varve/compaction"
	"github.com/varve/varve/record"
	"github.com/varve/varve/retention"
	"github.com/varve/varve/segment"
)

func topic(t *testing.T, b *Broker, kv map[string]string) Topic {
	t.Helper()
	tp, err := b.ParseTopic(kv)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// Kafka's LogConfig fields map one to one onto segment.Config.
func TestSegmentConfigMapping(t *testing.T) {
	tp := topic(t, Default(), map[string]string{
		"segment.bytes": "1048576", "segment.ms": "60000", "segment.jitter.ms": "500",
		"index.interval.bytes": "8192", "segment.index.bytes": "4096", "flush.messages": "10",
		"flush.ms": "250", "max.message.bytes": "5000", "file.delete.delay.ms": "30000",
	})
	want := segment.Config{
		SegmentBytes: 1 << 20, SegmentMs: time.Minute, SegmentJitterMs: 500 * time.Millisecond,
		IndexIntervalBytes: 8192, SegmentIndexBytes: 4096, FlushMessages: 10,
		FlushMs: 250 * time.Millisecond, MaxMessageBytes: 5000, FileDeleteDelay: 30 * time.Second,
		ProducerIDExpiration: segment.DefaultProducerIDExpiration,
	}
	if d := cmp.Diff(want, tp.SegmentConfig(), cmpopts.IgnoreFields(segment.Config{}, "FS", "Logger", "Now", "Managed")); d != "" {
		t.Errorf("SegmentConfig (-want +got)\n%s", d)
	}
}

// Kafka's defaults, and Kafka's zeros, which segment takes as they are:
// flush.ms=0 (no message waits), index.interval.bytes=0 (index every
// batch), file.delete.delay.ms=0 (delete at once).
func TestSegmentConfigSpecialValues(t *testing.T) {
	def := Default().TopicDefaults().SegmentConfig()
	if def.FlushMessages != math.MaxInt64 || def.FlushMs != segment.FlushNever || def.SegmentMs != 7*24*time.Hour || def.SegmentBytes != 1<<30 {
		t.Errorf("defaults: %+v; want never flush, 7 days, 1 GiB", def)
	}
	c := topic(t, Default(), map[string]string{"flush.ms": "0", "index.interval.bytes": "0", "file.delete.delay.ms": "0"}).SegmentConfig()
	if c.FlushMs != 0 || c.FlushMessages != math.MaxInt64 || c.IndexIntervalBytes != 0 || c.FileDeleteDelay != 0 {
		t.Errorf("zeros: flush.ms %v, flush.messages %d, index interval %d, delete delay %v; want 0, unchanged, 0, 0",
			c.FlushMs, c.FlushMessages, c.IndexIntervalBytes, c.FileDeleteDelay)
	}
	b := mustParse(t, map[string]string{"producer.id.expiration.ms": "60000"})
	if got := b.LogConfig(b.TopicDefaults()).ProducerIDExpiration; got != time.Minute {
		t.Errorf("LogConfig producer.id.expiration.ms = %v, want 1m", got)
	}
	// Kafka LogConfig.maxSegmentMs: a compacted topic rolls by max.compaction.lag.ms.
	c = topic(t, Default(), map[string]string{"cleanup.policy": "compact", "max.compaction.lag.ms": "3600000"}).SegmentConfig()
	if c.SegmentMs != time.Hour {
		t.Errorf("compacted segment.ms = %v, want max.compaction.lag.ms 1h", c.SegmentMs)
	}
	c = topic(t, Default(), map[string]string{"cleanup.policy": "delete", "max.compaction.lag.ms": "3600000"}).SegmentConfig()
	if c.SegmentMs != 7*24*time.Hour {
		t.Errorf("non-compacted segment.ms = %v, want 7 days", c.SegmentMs)
	}
}

// The smallest values config accepts are ones segment.Open accepts, so a
// topic that passes CreateTopics can always be opened.
func TestSegmentOpensWithMinimums(t *testing.T) {
	tp := topic(t, Default(), map[string]string{
		"segment.bytes": "14", "segment.index.bytes": "48", "max.message.bytes": "61",
		"segment.ms": "1", "index.interval.bytes": "0", "file.delete.delay.ms": "0", "flush.ms": "0",
	})
	l, err := segment.Open(t.TempDir(), tp.SegmentConfig())
	if err != nil {
		t.Fatalf("segment.Open with config's minimums: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestRetentionPolicyMapping(t *testing.T) {
	cases := []struct {
		kv   map[string]string
		want retention.Policy
	}{
		{nil, retention.Policy{CleanupPolicy: segment.CleanupDelete, RetentionMs: 7 * 24 * time.Hour, RetentionBytes: retention.Unlimited}},
		{map[string]string{"retention.ms": "-1", "retention.bytes": "1073741824", "cleanup.policy": "compact,delete"},
			retention.Policy{CleanupPolicy: segment.CleanupDelete | segment.CleanupCompact, RetentionMs: retention.Unlimited, RetentionBytes: 1 << 30}},
		// Kafka's zeros are retention's zeros: retention.bytes=0 deletes
		// every segment, retention.ms=0 every one with a past timestamp.
		{map[string]string{"retention.ms": "0", "retention.bytes": "0", "cleanup.policy": "compact"},
			retention.Policy{CleanupPolicy: segment.CleanupCompact, RetentionMs: 0, RetentionBytes: 0}},
		{map[string]string{"retention.ms": "9223372036854775807", "retention.bytes": "-5"},
			retention.Policy{CleanupPolicy: segment.CleanupDelete, RetentionMs: math.MaxInt64, RetentionBytes: retention.Unlimited}},
	}
	for _, c := range cases {
		if d := cmp.Diff(c.want, topic(t, Default(), c.kv).RetentionPolicy()); d != "" {
			t.Errorf("%v: RetentionPolicy (-want +got)\n%s", c.kv, d)
		}
	}
}

func TestCompactionMapping(t *testing.T) {
	tp := topic(t, Default(), map[string]string{
		"min.cleanable.dirty.ratio": "0.2", "min.compaction.lag.ms": "1000",
		"max.compaction.lag.ms": "60000", "delete.retention.ms": "5000",
	})
	want := compaction.TopicConfig{MinCleanableDirtyRatio: 0.2, MinCompactionLag: time.Second, MaxCompactionLag: time.Minute, DeleteRetention: 5 * time.Second}
	if d := cmp.Diff(want, tp.CompactionTopicConfig()); d != "" {
		t.Errorf("CompactionTopicConfig (-want +got)\n%s", d)
	}
	if d := cmp.Diff(want, tp.CompactionConfig().TopicConfig); d != "" {
		t.Errorf("CompactionConfig.TopicConfig (-want +got)\n%s", d)
	}
	z := topic(t, Default(), map[string]string{"min.cleanable.dirty.ratio": "0", "delete.retention.ms": "0"}).CompactionTopicConfig()
	if z.MinCleanableDirtyRatio != 0 || z.DeleteRetention != 0 {
		t.Errorf("zeros: ratio %v, delete retention %v; want 0 and 0, as given", z.MinCleanableDirtyRatio, z.DeleteRetention)
	}
	if d := Default().TopicDefaults().CompactionTopicConfig(); d.MaxCompactionLag != math.MaxInt64 || d.DeleteRetention != 24*time.Hour {
		t.Errorf("defaults: %+v", d)
	}
}

// Kafka's CleanerConfig from log.cleaner.*; compaction accepts it.
func TestCleanerConfig(t *testing.T) {
	b := mustParse(t, map[string]string{
		"log.cleaner.threads": "2", "log.cleaner.dedupe.buffer.size": "67108864", "log.cleaner.io.buffer.size": "1048576",
		"log.cleaner.io.buffer.load.factor": "0.75", "log.cleaner.backoff.ms": "0", "log.cleaner.min.cleanable.ratio": "0.3",
		"log.cleaner.io.max.bytes.per.second": "1048576",
	})
	c := b.CleanerConfig()
	if c.Threads != 2 || c.DedupeBufferSize != 64<<20 || c.IOBufferSize != 1<<20 || c.IOBufferLoadFactor != 0.75 ||
		c.Backoff != time.Millisecond || c.MinCleanableDirtyRatio != 0.3 || c.MaxIOBytesPerSecond != 1<<20 {
		t.Errorf("CleanerConfig = %+v", c)
	}
	if Default().CleanerConfig().MaxIOBytesPerSecond != compaction.Unthrottled {
		t.Error("Kafka's unlimited Double.MAX_VALUE should map to compaction.Unthrottled")
	}
	if _, err := compaction.NewCleaner(Default().CleanerConfig(), func() []compaction.Target { return nil }); err != nil {
		t.Errorf("compaction refuses the default cleaner config: %v", err)
	}
	off := mustParse(t, map[string]string{"log.cleaner.threads": "0"})
	if off.CleanerEnabled() || !Default().CleanerEnabled() || mustParse(t, map[string]string{"log.cleaner.enable": "false"}).CleanerEnabled() {
		t.Error("CleanerEnabled does not follow log.cleaner.enable and log.cleaner.threads")
	}
}

func TestTopicAccessors(t *testing.T) {
	cases := []struct {
		ct       string
		codec    record.Compression
		producer bool
	}{{"producer", record.CompressionNone, true}, {"uncompressed", record.CompressionNone, false}, {"zstd", record.CompressionZstd, false}, {"lz4", record.CompressionLZ4, false}, {"gzip", record.CompressionGzip, false}, {"snappy", record.CompressionSnappy, false}}
	for _, c := range cases {
		codec, producer := topic(t, Default(), map[string]string{"compression.type": c.ct}).Compression()
		if codec != c.codec || producer != c.producer {
			t.Errorf("%s: Compression = %v, %v", c.ct, codec, producer)
		}
	}
	tp := topic(t, Default(), map[string]string{"message.timestamp.type": "LogAppendTime", "preallocate": "true",
		"message.timestamp.before.max.ms": "1000", "message.timestamp.after.max.ms": "2000"})
	if tp.MessageTimestampType() != record.TimestampLogAppendTime || !tp.Preallocate() ||
		tp.MessageTimestampBeforeMax() != time.Second || tp.MessageTimestampAfterMax() != 2*time.Second {
		t.Error("accessors disagree with the overrides")
	}
	var zero Topic
	if zero.MessageTimestampType() != record.TimestampCreateTime || zero.MinInsyncReplicas() != 1 || zero.SegmentConfig().SegmentBytes != 1<<30 {
		t.Error("the zero Topic is not Kafka's defaults")
	}
}

// The storage packages' DefaultConfig functions and config's tables give
// the same numbers: a library user starting from segment.DefaultConfig
// gets what a broker with no properties gives a topic.
func TestStorageDefaultsAgreeWithTheTables(t *testing.T) {
	b := Default()
	noFuncs := cmpopts.IgnoreTypes(func() int64 { return 0 }, func() time.Time { return time.Time{} })
	if d := cmp.Diff(segment.DefaultConfig(), b.LogConfig(b.TopicDefaults()), cmpopts.IgnoreFields(segment.Config{}, "FS", "Logger", "Now", "OnFlush", "Managed")); d != "" {
		t.Errorf("segment.DefaultConfig (-) vs config's topic defaults (+)\n%s", d)
	}
	if d := cmp.Diff(retention.DefaultPolicy(), b.TopicDefaults().RetentionPolicy()); d != "" {
		t.Errorf("retention.DefaultPolicy (-) vs config's topic defaults (+)\n%s", d)
	}
	if d := cmp.Diff(compaction.DefaultTopicConfig(), b.TopicDefaults().CompactionTopicConfig()); d != "" {
		t.Errorf("compaction.DefaultTopicConfig (-) vs config's topic defaults (+)\n%s", d)
	}
	if d := cmp.Diff(compaction.DefaultConfig(), b.CleanerConfig(), noFuncs,
		cmpopts.IgnoreFields(compaction.Config{}, "UpperBound", "Now", "Logger", "OnClean")); d != "" {
		t.Errorf("compaction.DefaultConfig (-) vs config's log.cleaner.* defaults (+)\n%s", d)
	}
	if got, want := b.LogRetentionCheckIntervalMs.Duration(), retention.DefaultCheckInterval; got != want {
		t.Errorf("log.retention.check.interval.ms %v, retention.DefaultCheckInterval %v", got, want)
	}
}
