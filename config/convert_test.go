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
	}
	if d := cmp.Diff(want, tp.SegmentConfig(), cmpopts.IgnoreFields(segment.Config{}, "FS", "Logger", "Now", "Managed")); d != "" {
		t.Errorf("SegmentConfig (-want +got)\n%s", d)
	}
}

// Kafka's defaults, and the values where Kafka's 0 means something the
// segment package spells differently.
func TestSegmentConfigSpecialValues(t *testing.T) {
	def := Default().TopicDefaults().SegmentConfig()
	if def.FlushMessages != math.MaxInt64 || def.FlushMs != 0 || def.SegmentMs != 7*24*time.Hour || def.SegmentBytes != 1<<30 {
		t.Errorf("defaults: %+v; want never flush, 7 days, 1 GiB", def)
	}
	c := topic(t, Default(), map[string]string{"flush.ms": "0", "index.interval.bytes": "0", "file.delete.delay.ms": "0"}).SegmentConfig()
	if c.FlushMessages != 1 || c.IndexIntervalBytes != 1 || c.FileDeleteDelay != time.Nanosecond {
		t.Errorf("zeros: flush.messages %d, index interval %d, delete delay %v; want 1, 1, 1ns", c.FlushMessages, c.IndexIntervalBytes, c.FileDeleteDelay)
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
		{nil, retention.Policy{CleanupPolicy: retention.CleanupDelete, RetentionMs: 7 * 24 * time.Hour, RetentionBytes: retention.Unlimited}},
		{map[string]string{"retention.ms": "-1", "retention.bytes": "1073741824", "cleanup.policy": "compact,delete"},
			retention.Policy{CleanupPolicy: retention.CleanupDelete | retention.CleanupCompact, RetentionMs: retention.Unlimited, RetentionBytes: 1 << 30}},
		{map[string]string{"retention.ms": "0", "retention.bytes": "0", "cleanup.policy": "compact"},
			retention.Policy{CleanupPolicy: retention.CleanupCompact, RetentionMs: time.Nanosecond, RetentionBytes: 1}},
		{map[string]string{"retention.ms": "9223372036854775807", "retention.bytes": "-5"},
			retention.Policy{CleanupPolicy: retention.CleanupDelete, RetentionMs: math.MaxInt64, RetentionBytes: retention.Unlimited}},
	}
	for _, c := range cases {
		if d := cmp.Diff(c.want, topic(t, Default(), c.kv).RetentionPolicy()); d != "" {
			t.Errorf("%v: RetentionPolicy (-want +got)\n%s", c.kv, d)
		}
	}
	// retention.ms=0 is compared in whole milliseconds as 0, like Kafka's.
	if ms := topic(t, Default(), map[string]string{"retention.ms": "0"}).RetentionPolicy().RetentionMs.Milliseconds(); ms != 0 {
		t.Errorf("retention.ms=0 maps to %d ms", ms)
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
	if z.MinCleanableDirtyRatio != math.SmallestNonzeroFloat64 || z.DeleteRetention != time.Nanosecond {
		t.Errorf("zeros: ratio %v, delete retention %v", z.MinCleanableDirtyRatio, z.DeleteRetention)
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
	if Default().CleanerConfig().MaxIOBytesPerSecond != 0 {
		t.Error("Kafka's unlimited Double.MAX_VALUE should map to compaction's 0 (unlimited)")
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
