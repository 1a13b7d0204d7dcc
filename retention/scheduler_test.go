package retention_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/varve/varve/record"
	"github.com/varve/varve/retention"
	"github.com/varve/varve/segment"
)

// Kafka: LogManager schedules kafka-log-retention every
// log.retention.check.interval.ms; each run applies every log's own
// policy, and logs with compact in cleanup.policy are left to the cleaner.
func TestSchedulerAppliesEachLogsPolicyEveryInterval(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var logs []*segment.Log
	policies := map[*segment.Log]retention.Policy{}
	for _, p := range []retention.Policy{
		{CleanupPolicy: segment.CleanupDelete, RetentionMs: hour, RetentionBytes: retention.Unlimited},                // delete: its old segments go
		{CleanupPolicy: segment.CleanupDelete, RetentionMs: retention.Unlimited, RetentionBytes: retention.Unlimited}, // delete, unlimited: nothing goes
		{CleanupPolicy: segment.CleanupCompact, RetentionMs: hour, RetentionBytes: retention.Unlimited},               // left to the cleaner
	} {
		l := openLog(t, t.TempDir(), logConfig())
		defer l.Close()
		segmentsAt(t, l, t0, t0)
		logs = append(logs, l)
		policies[l] = p
	}
	var runs atomic.Int32
	s, err := retention.NewScheduler(retention.SchedulerConfig{
		CheckInterval: 20 * time.Millisecond,
		InitialDelay:  -1,
		Logs:          func() []*segment.Log { return logs },
		Policy:        func(l *segment.Log) retention.Policy { return policies[l] },
		Now:           func() time.Time { return t0.Add(100 * hour) },
		OnResult:      func(*segment.Log, retention.Result, error) { runs.Add(1) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return runs.Load() >= 4 }) // two checks of the two delete logs
	s.Stop()
	s.Stop() // idempotent
	if got := len(logs[0].Segments()); got != 1 {
		t.Errorf("delete log has %d segments, want 1 (empty active)", got)
	}
	if got := len(logs[1].Segments()); got != 3 {
		t.Errorf("unlimited log has %d segments, want 3", got)
	}
	if got := len(logs[2].Segments()); got != 3 {
		t.Errorf("compacted log has %d segments, want 3: the cleaner owns its retention", got)
	}
}

// The library user without a cleaner can ask for compacted logs too: only
// the log-start-offset rule applies to cleanup.policy=compact.
func TestSchedulerIncludeCompacted(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	l := openLog(t, t.TempDir(), logConfig())
	defer l.Close()
	segmentsAt(t, l, t0, t0, t0)
	if err := l.SetStartOffset(15); err != nil {
		t.Fatal(err)
	}
	p := retention.DefaultPolicy()
	p.CleanupPolicy = segment.CleanupCompact
	s, err := retention.NewScheduler(retention.SchedulerConfig{
		Logs:             func() []*segment.Log { return []*segment.Log{l} },
		Policy:           func(*segment.Log) retention.Policy { return p },
		IncludeCompacted: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := s.RunOnce(context.Background()); n != 1 {
		t.Fatalf("RunOnce deleted %d segments, want 1 (below the log start offset 15)", n)
	}
}

// Stop waits for the goroutine; a cancelled context stops it as well.
func TestSchedulerStopsWithContext(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s, err := retention.NewScheduler(retention.SchedulerConfig{Logs: func() []*segment.Log { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err == nil {
		t.Fatal("second Start succeeded")
	}
	cancel()
	s.Stop()
	if _, err := retention.NewScheduler(retention.SchedulerConfig{}); !errors.Is(err, retention.ErrInvalidPolicy) {
		t.Fatalf("NewScheduler without Logs: err %v, want ErrInvalidPolicy", err)
	}
}

// Kafka: a deleted segment stays readable through open files until
// file.delete.delay.ms; a read that loses the race gets a clean
// OFFSET_OUT_OF_RANGE, never garbage. Run with -race.
func TestReadersDuringRetentionSeeValidBatchesOrOutOfRange(t *testing.T) {
	cfg := logConfig()
	cfg.SegmentBytes = 4096
	cfg.FileDeleteDelay = time.Millisecond
	l := openLog(t, t.TempDir(), cfg)
	defer l.Close()
	for i := range 200 {
		if _, err := l.Append(batch(t, 4, 50, t0.Add(time.Duration(i)*time.Minute).UnixMilli())); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var reads, outOfRange atomic.Int64
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				// Walk from the start to the end in small reads, so that
				// retention overtakes the reader.
				for off := l.StartOffset(); off < l.EndOffset(); {
					next, err := readOnce(l, off)
					reads.Add(1)
					if errors.Is(err, segment.ErrOffsetOutOfRange) {
						outOfRange.Add(1)
						break
					}
					if err != nil {
						t.Error(err)
						return
					}
					off = next
				}
			}
		}()
	}
	for i := range 200 {
		now := t0.Add(time.Duration(i+60) * time.Minute)
		p := retention.DefaultPolicy()
		p.RetentionMs = hour
		if _, err := retention.Enforce(l, p, l.EndOffset(), now); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("%d reads, %d out of range", reads.Load(), outOfRange.Load())
	if l.StartOffset() == 0 {
		t.Fatal("retention deleted nothing")
	}
}

// readOnce reads from offset, checks every batch it gets (valid, in
// increasing offset order, none before offset) and returns the offset to
// read next.
func readOnce(l *segment.Log, offset int64) (int64, error) {
	buf, err := l.ReadBytes(offset, 600)
	if err != nil {
		return offset, err
	}
	next := offset
	for p := 0; p < len(buf); {
		_, n, err := record.NextBatch(buf[p:], 0)
		if err != nil {
			return next, err
		}
		h, err := record.ValidateBatch(buf[p : p+n])
		if err != nil {
			return next, err
		}
		if h.LastOffset() < next {
			return next, fmt.Errorf("read at %d returned a batch ending at %d", next, h.LastOffset())
		}
		next = h.NextOffset()
		p += n
	}
	if next == offset {
		return next, fmt.Errorf("read at %d below the end returned nothing", offset)
	}
	return next, nil
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
