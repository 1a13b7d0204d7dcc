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
	"github.com/varve/varve/segment"
)

// quietConfig is Kafka's cleaner defaults with the tests' quiet logger.
func quietConfig() compaction.Config {
	c := compaction.DefaultConfig()
	c.Logger = quiet
	return c
}

// dirtyLog makes a log with `clean` segments already cleaned (one key
// each) and then `dirty` sealed segments of new keys, so its dirty ratio
// is about dirty / (clean + dirty).
func dirtyLog(t *testing.T, clean, dirty int) *segment.Log {
	t.Helper()
	l := openLog(t, t.TempDir(), logConfig())
	for i := range clean {
		appendKV(t, l, record.CompressionNone, t0, rec(fmt.Sprint("c", i), "0123456789"))
		roll(t, l)
	}
	if clean > 0 {
		cc := compaction.DefaultConfig()
		cc.Logger = quiet
		must[compaction.Stats](t)(compaction.Clean(l, cc, t0))
	}
	for i := range dirty {
		appendKV(t, l, record.CompressionNone, t0, rec(fmt.Sprint("d", i), "0123456789"))
		roll(t, l)
	}
	return l
}

// Kafka (LogCleanerManager.grabFilthiestCompactedLog): among compacted
// logs whose dirty ratio exceeds min.cleanable.dirty.ratio, the one with
// the highest ratio is cleaned first; logs below the ratio are left
// alone. (Logs without compact in cleanup.policy are not targets: the
// broker lists only compacted logs.)
func TestCleanerPicksTheFilthiestLog(t *testing.T) {
	low := dirtyLog(t, 3, 1)  // ratio about 0.25: below 0.5
	mid := dirtyLog(t, 1, 2)  // about 0.67
	high := dirtyLog(t, 1, 6) // about 0.86
	for _, l := range []*segment.Log{low, mid, high} {
		defer l.Close()
	}
	var order []*segment.Log
	cfg := quietConfig()
	cfg.OnClean = func(l *segment.Log, _ compaction.Stats, err error) {
		if err != nil {
			t.Error(err)
		}
		order = append(order, l)
	}
	c, err := compaction.NewCleaner(cfg, func() []compaction.Target {
		return []compaction.Target{{Log: low}, {Log: mid}, {Log: high}}
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
	cfg := quietConfig()
	cfg.Now = func() time.Time { return t0.Add(2 * time.Hour) }
	cfg.OnClean = func(*segment.Log, compaction.Stats, error) { cleaned++ }
	for _, lag := range []time.Duration{3 * time.Hour, time.Hour} {
		topic := compaction.DefaultTopicConfig()
		topic.MaxCompactionLag = lag
		c := must[*compaction.Cleaner](t)(compaction.NewCleaner(cfg, func() []compaction.Target {
			return []compaction.Target{{Log: l, Topic: &topic}}
		}))
		c.RunOnce(context.Background())
	}
	if cleaned != 1 {
		t.Fatalf("cleaned %d times; want once, when the 1 h lag had passed (the 3 h one had not)", cleaned)
	}
}

// Kafka: retention of compacted logs runs in the cleaner threads, after
// a round (LogCleanerManager.deletableLogs): each target's Retain is
// called once per round, with the Cleaner's upper bound and clock, and
// never while a pass holds the log. (cluster's cleaners_test checks the
// rules a broker's Retain applies.)
func TestCleanerRunsRetainAfterEachRound(t *testing.T) {
	l := dirtyLog(t, 0, 4)
	defer l.Close()
	now := t0.Add(48 * time.Hour)
	cfg := quietConfig()
	cfg.Now = func() time.Time { return now }
	cfg.UpperBound = func(*segment.Log) int64 { return 3 }
	type call struct {
		upper int64
		now   time.Time
	}
	var calls []call
	retain := func(rl *segment.Log, upper int64, at time.Time) error {
		if rl != l {
			t.Errorf("Retain called with another log")
		}
		// Held by this round: a Clean now must find the log busy.
		if _, err := compaction.Clean(rl, quietConfig(), at); !errors.Is(err, compaction.ErrCleaningInProgress) {
			t.Errorf("Clean during Retain: err %v, want ErrCleaningInProgress", err)
		}
		calls = append(calls, call{upper, at})
		return nil
	}
	c := must[*compaction.Cleaner](t)(compaction.NewCleaner(cfg, func() []compaction.Target {
		return []compaction.Target{{Log: l, Retain: retain}}
	}))
	if !c.RunOnce(context.Background()) {
		t.Fatal("the first round cleaned nothing")
	}
	c.RunOnce(context.Background())
	if len(calls) != 2 || calls[0] != (call{3, now}) || calls[1] != (call{3, now}) {
		t.Fatalf("Retain calls %v; want two, each with upper bound 3 and the Cleaner's clock", calls)
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
	cfg := quietConfig()
	cfg.Threads, cfg.Backoff = 2, 5*time.Millisecond
	cfg.OnClean = func(l *segment.Log, _ compaction.Stats, err error) {
		if err != nil {
			t.Error(err)
		}
		mu.Lock()
		cleaned[l] = true
		mu.Unlock()
	}
	c := must[*compaction.Cleaner](t)(compaction.NewCleaner(cfg, func() []compaction.Target {
		out := make([]compaction.Target, len(logs))
		for i, l := range logs {
			out[i] = compaction.Target{Log: l}
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
	cfg := quietConfig()
	cfg.UncleanableRetry = time.Hour
	cfg.Now = func() time.Time { return now }
	cfg.OnClean = func(_ *segment.Log, _ compaction.Stats, err error) { errs = append(errs, err) }
	c := must[*compaction.Cleaner](t)(compaction.NewCleaner(cfg,
		func() []compaction.Target { return []compaction.Target{{Log: l}} }))
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
