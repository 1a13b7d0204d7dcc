package compaction_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/varve/varve/compaction"
	"github.com/varve/varve/record"
	"github.com/varve/varve/retention"
	"github.com/varve/varve/segment"
)

var compact = retention.Policy{CleanupPolicy: retention.CleanupCompact}

// dirtyLog makes a log with `clean` segments already cleaned (one key
// each) and then `dirty` sealed segments of new keys, so its dirty ratio
// is about dirty / (clean + dirty).
func dirtyLog(t *testing.T, clean, dirty int) *segment.Log {
	t.Helper()
	l := openLog(t, t.TempDir(), segment.Config{})
	for i := range clean {
		appendKV(t, l, record.CompressionNone, t0, rec(fmt.Sprint("c", i), "0123456789"))
		roll(t, l)
	}
	if clean > 0 {
		must[compaction.Stats](t)(compaction.Clean(l, compaction.Config{Logger: quiet}, t0))
	}
	for i := range dirty {
		appendKV(t, l, record.CompressionNone, t0, rec(fmt.Sprint("d", i), "0123456789"))
		roll(t, l)
	}
	return l
}

// Kafka (LogCleanerManager.grabFilthiestCompactedLog): among compacted
// logs whose dirty ratio exceeds min.cleanable.dirty.ratio, the one with
// the highest ratio is cleaned first; logs below the ratio and logs
// without compact in cleanup.policy are left alone.
func TestCleanerPicksTheFilthiestLog(t *testing.T) {
	low := dirtyLog(t, 3, 1)  // ratio about 0.25: below 0.5
	mid := dirtyLog(t, 1, 2)  // about 0.67
	high := dirtyLog(t, 1, 6) // about 0.86
	del := dirtyLog(t, 0, 5)  // ratio 1, but cleanup.policy=delete
	for _, l := range []*segment.Log{low, mid, high, del} {
		defer l.Close()
	}
	var order []*segment.Log
	c, err := compaction.NewCleaner(compaction.Config{Logger: quiet,
		OnClean: func(l *segment.Log, _ compaction.Stats, err error) {
			if err != nil {
				t.Error(err)
			}
			order = append(order, l)
		}}, func() []compaction.Target {
		return []compaction.Target{{Log: low, Retention: compact}, {Log: mid, Retention: compact},
			{Log: high, Retention: compact}, {Log: del, Retention: retention.Policy{RetentionMs: retention.Unlimited}}}
	})
	if err != nil {
		t.Fatal(err)
	}
	for c.RunOnce(context.Background()) {
	}
	if len(order) != 2 || order[0] != high || order[1] != mid {
		t.Fatalf("cleaned %d logs; want high then mid only", len(order))
	}
}

// Kafka: max.compaction.lag.ms forces the cleaning of a log whose oldest
// dirty segment's first batch is older than now - lag, whatever its ratio.
func TestMaxCompactionLagForcesCleaning(t *testing.T) {
	l := dirtyLog(t, 3, 1) // below the ratio
	defer l.Close()
	cleaned := 0
	cfg := compaction.Config{Logger: quiet, Now: func() time.Time { return t0.Add(2 * time.Hour) },
		OnClean: func(*segment.Log, compaction.Stats, error) { cleaned++ }}
	for _, lag := range []time.Duration{3 * time.Hour, time.Hour} {
		topic := compaction.TopicConfig{MaxCompactionLag: lag}
		c := must[*compaction.Cleaner](t)(compaction.NewCleaner(cfg, func() []compaction.Target {
			return []compaction.Target{{Log: l, Retention: compact, Topic: &topic}}
		}))
		c.RunOnce(context.Background())
	}
	if cleaned != 1 {
		t.Fatalf("cleaned %d times; want once, when the 1 h lag had passed (the 3 h one had not)", cleaned)
	}
}

// Kafka: for compacted logs retention runs in the cleaner threads
// (LogCleanerManager.deletableLogs): compact,delete gets retention.ms and
// retention.bytes, compact alone only the log-start-offset rule.
func TestCleanerAppliesRetentionToCompactedLogs(t *testing.T) {
	both := dirtyLog(t, 0, 4)
	only := dirtyLog(t, 0, 4)
	defer both.Close()
	defer only.Close()
	if err := only.SetStartOffset(2); err != nil {
		t.Fatal(err)
	}
	old := retention.Policy{RetentionMs: time.Hour}
	c := must[*compaction.Cleaner](t)(compaction.NewCleaner(compaction.Config{Logger: quiet,
		Now: func() time.Time { return t0.Add(48 * time.Hour) }}, func() []compaction.Target {
		return []compaction.Target{
			{Log: both, Retention: retention.Policy{CleanupPolicy: retention.CleanupCompact | retention.CleanupDelete, RetentionMs: old.RetentionMs}},
			{Log: only, Retention: retention.Policy{CleanupPolicy: retention.CleanupCompact, RetentionMs: old.RetentionMs}},
		}
	}))
	for c.RunOnce(context.Background()) {
	}
	if both.StartOffset() != 4 || len(both.Segments()) != 1 {
		t.Fatalf("compact,delete log starts at %d with %d segments; want 4 and 1 (all old segments deleted)", both.StartOffset(), len(both.Segments()))
	}
	if only.StartOffset() != 2 || only.Segments()[0].BaseOffset != 2 {
		t.Fatalf("compact log starts at %d, first segment %d; want 2 and 2 (start-offset rule only)", only.StartOffset(), only.Segments()[0].BaseOffset)
	}
}

// log.cleaner.threads workers clean many logs concurrently and stop
// cleanly (no goroutine left behind).
func TestCleanerThreadsCleanEveryLogAndStop(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var logs []*segment.Log
	for range 6 {
		l := dirtyLog(t, 0, 3)
		defer l.Close()
		appendKV(t, l, record.CompressionNone, t0, rec("d0", "again"))
		roll(t, l)
		logs = append(logs, l)
	}
	var mu sync.Mutex
	cleaned := map[*segment.Log]bool{}
	c := must[*compaction.Cleaner](t)(compaction.NewCleaner(compaction.Config{Threads: 2, Backoff: 5 * time.Millisecond, Logger: quiet,
		OnClean: func(l *segment.Log, _ compaction.Stats, err error) {
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			cleaned[l] = true
			mu.Unlock()
		}}, func() []compaction.Target {
		out := make([]compaction.Target, len(logs))
		for i, l := range logs {
			out[i] = compaction.Target{Log: l, Retention: compact}
		}
		return out
	}))
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(cleaned)
		mu.Unlock()
		if n == len(logs) || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	c.Stop()
	c.Stop()
	if len(cleaned) != len(logs) {
		t.Fatalf("%d of %d logs cleaned", len(cleaned), len(logs))
	}
	for _, l := range logs {
		if n := len(readAll(t, l)); n != 3 {
			t.Fatalf("log has %d records after cleaning, want 3", n)
		}
	}
}

// A pass that fails (here on a corrupt batch) marks the log uncleanable
// for UncleanableRetry, then the Cleaner tries it again (Kafka waits for
// a restart, KAFKA-19895).
func TestCleanerRetriesAnUncleanableLog(t *testing.T) {
	l := dirtyLog(t, 0, 3)
	defer l.Close()
	corrupt(t, l.Segments()[1])
	now := t0
	var errs []error
	c := must[*compaction.Cleaner](t)(compaction.NewCleaner(compaction.Config{Logger: quiet, UncleanableRetry: time.Hour,
		Now:     func() time.Time { return now },
		OnClean: func(_ *segment.Log, _ compaction.Stats, err error) { errs = append(errs, err) }},
		func() []compaction.Target { return []compaction.Target{{Log: l, Retention: compact}} }))
	c.RunOnce(context.Background())
	now = now.Add(30 * time.Minute)
	c.RunOnce(context.Background())
	now = now.Add(31 * time.Minute)
	c.RunOnce(context.Background())
	if len(errs) != 2 || !errors.Is(errs[0], compaction.ErrCorruptSegment) {
		t.Fatalf("passes ended with %v; want two ErrCorruptSegment, an hour apart", errs)
	}
}

// corrupt flips a byte inside the records of the segment's first batch,
// so its CRC no longer matches.
func corrupt(t *testing.T, s segment.SegmentInfo) {
	t.Helper()
	f, err := os.OpenFile(s.Path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, record.BatchHeaderSize+2); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b, record.BatchHeaderSize+2); err != nil {
		t.Fatal(err)
	}
}
