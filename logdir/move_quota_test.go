package logdir

import (
	"math"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func sec(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

// Kafka: ReplicationQuotaManager measures with SimpleRate over
// SampledStat: the bytes of the samples younger than window.num x
// window.size, over the time since the oldest began, counted as at
// least one whole window (so that a first record is not measured over
// a few milliseconds).
func TestMoveQuotaRateIsKafkasSimpleRate(t *testing.T) {
	q := newMoveQuota(1000, 11, time.Second)
	if r := q.rate(t0); r != 0 {
		t.Fatalf("rate before any copy: %v, want 0", r)
	}
	q.record(1000, t0)
	if r := q.rate(t0); r != 1000 {
		t.Fatalf("rate at once: %v, want 1000 B over the one-window minimum", r)
	}
	if d := q.delay(t0); d != 0 {
		t.Fatalf("delay at the bound: %v, want none (Kafka throttles above it)", d)
	}
	q.record(1000, sec(0.5))
	if d := q.delay(sec(0.5)); d <= 0 || d > time.Second {
		t.Fatalf("delay above the bound: %v, want (0, one window]", d)
	}
	if r := q.rate(sec(4)); r != 500 {
		t.Fatalf("rate 4 s after the first record: %v, want 2000 B over 4 s", r)
	}
	q.record(2000, sec(12)) // a new sample; the first is now obsolete
	if r := q.rate(sec(12)); r != 2000 {
		t.Fatalf("rate after the first sample expired: %v, want 2000 B over one window", r)
	}
	if r := q.rate(sec(30)); r != 0 {
		t.Fatalf("rate once every sample expired: %v, want 0", r)
	}
}

// simulateCopy copies as the move's loop does, on a fake time line:
// wait out the delay, read a chunk, record it. It returns the bytes
// copied by each whole second up to secs.
func simulateCopy(q *moveQuota, secs int) []int64 {
	now, total := t0, int64(0)
	var bySecond []int64
	for len(bySecond) < secs {
		if d := q.delay(now); d > 0 {
			now = now.Add(d)
		} else {
			total += int64(q.chunk())
			q.record(int64(q.chunk()), now)
			now = now.Add(time.Millisecond) // the read itself
		}
		for len(bySecond) < secs && !now.Before(sec(float64(len(bySecond)+1))) {
			bySecond = append(bySecond, total)
		}
	}
	return bySecond
}

// Kafka: ReplicationQuotaManager of type ALTER_LOG_DIRS: over a long
// copy the bytes per second converge to the bound. After Kafka's
// initial allowance (the rate of the first bytes is measured over one
// window), every stretch of 11 windows copies at most 11 windows of
// the bound plus one chunk, and the copy never stalls below it.
func TestMoveQuotaBoundsALongCopy(t *testing.T) {
	const bound = 100 << 10
	q := newMoveQuota(bound, 11, time.Second)
	by := simulateCopy(q, 120)
	chunk := int64(q.chunk())
	for s := 11; s < len(by); s++ {
		if got := by[s] - by[s-11]; got > 11*bound+chunk {
			t.Fatalf("seconds %d to %d: %d bytes, more than 11 s at %d B/s plus a chunk", s-11, s, got, bound)
		}
	}
	if avg := float64(by[119]-by[19]) / 100; avg < 0.9*bound || avg > 1.1*bound {
		t.Fatalf("average rate from 20 s to 120 s: %.0f B/s, want about %d", avg, bound)
	}
}

// Kafka: the bound of the quota changes live (ConfigHandler updateQuota):
// waiting copies are told, an unlimited bound never delays, and a zero
// bound lets the first read go and then none.
func TestMoveQuotaBoundChanges(t *testing.T) {
	q := newMoveQuota(1, 11, time.Second)
	q.record(1<<20, t0)
	if d := q.delay(t0); d != time.Second {
		t.Fatalf("far above the bound: delay %v, want one window (then asked again)", d)
	}
	_, changed := q.limit()
	q.setBound(math.MaxInt64)
	select {
	case <-changed:
	default:
		t.Fatal("a change of the bound was not signalled")
	}
	if d := q.delay(t0); d != 0 || q.chunk() != moveChunk {
		t.Fatalf("unlimited: delay %v, chunk %d", d, q.chunk())
	}
	z := newMoveQuota(0, 11, time.Second)
	if d := z.delay(t0); d != 0 {
		t.Fatalf("bound 0, nothing read: delay %v, want the first read to go", d)
	}
	z.record(1, t0)
	if d := z.delay(sec(100)); d != 0 {
		t.Fatalf("bound 0 once the read expired: delay %v", d)
	}
	z.record(1, sec(100))
	if d := z.delay(sec(100)); d != time.Second {
		t.Fatalf("bound 0 after a read: delay %v, want one window", d)
	}
}
