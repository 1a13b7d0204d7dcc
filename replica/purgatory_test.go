package replica

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testOp completes when ready is set; it records its completions.
type testOp struct {
	ready     atomic.Bool
	tries     atomic.Int32
	completed atomic.Int32
	expired   atomic.Bool
	onDone    func()
}

func (o *testOp) TryComplete() bool { o.tries.Add(1); return o.ready.Load() }
func (o *testOp) OnComplete(expired bool) {
	if o.completed.Add(1) > 1 {
		panic("operation completed twice")
	}
	o.expired.Store(expired)
	if o.onDone != nil {
		o.onDone()
	}
}

// manualClock is a clock a test moves by hand.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *manualClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *manualClock) Add(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

func newManualPurgatory(t testing.TB, wheel bool) (*Purgatory, *manualClock) {
	clk := &manualClock{now: time.Unix(1000, 0)}
	pg := NewPurgatory(PurgatoryConfig{Clock: clk.Now, Manual: true, btree: !wheel})
	t.Cleanup(pg.Close)
	return pg, clk
}

// forBothTimers runs a test over the B-tree timer and the timing wheel.
func forBothTimers(t *testing.T, f func(t *testing.T, wheel bool)) {
	t.Run("btree", func(t *testing.T) { f(t, false) })
	t.Run("wheel", func(t *testing.T) { f(t, true) })
}

// Kafka: DelayedOperationPurgatory.tryCompleteElseWatch completes an
// operation that is satisfied already without watching it.
func TestPurgatoryCompletesOnWatch(t *testing.T) {
	forBothTimers(t, func(t *testing.T, wheel bool) {
		pg, _ := newManualPurgatory(t, wheel)
		var k WatchList
		op := &testOp{}
		op.ready.Store(true)
		if !pg.Watch(op, time.Second, &k) {
			t.Fatal("a satisfied operation was not completed at once")
		}
		if op.completed.Load() != 1 || op.expired.Load() || k.Len() != 0 || pg.Pending() != 0 {
			t.Fatalf("completed %d expired %v, watched %d, pending %d", op.completed.Load(), op.expired.Load(), k.Len(), pg.Pending())
		}
	})
}

// Kafka: checkAndComplete(key) after an event completes the operations
// watching that key, and only those it satisfies.
func TestPurgatoryCompletesOnEvent(t *testing.T) {
	forBothTimers(t, func(t *testing.T, wheel bool) {
		pg, _ := newManualPurgatory(t, wheel)
		var k1, k2 WatchList
		a, b := &testOp{}, &testOp{}
		pg.Watch(a, time.Second, &k1, &k2)
		pg.Watch(b, time.Second, &k2)
		if n := k1.CheckAndComplete(); n != 0 {
			t.Fatalf("an event completed %d unsatisfied operations", n)
		}
		a.ready.Store(true)
		if n := k1.CheckAndComplete(); n != 1 || a.completed.Load() != 1 || a.expired.Load() {
			t.Fatalf("event completed %d; a completed %d expired %v", n, a.completed.Load(), a.expired.Load())
		}
		if n := k2.CheckAndComplete(); n != 0 || b.completed.Load() != 0 {
			t.Fatal("an event on k2 completed a twice or b without cause")
		}
		if pg.Pending() != 1 || k1.Len() != 0 || k2.Len() != 1 {
			t.Fatalf("pending %d, k1 %d, k2 %d", pg.Pending(), k1.Len(), k2.Len())
		}
	})
}

// Kafka: an operation not satisfied by its deadline expires and
// completes with what it has (onExpiration, then onComplete).
func TestPurgatoryCompletesOnExpiry(t *testing.T) {
	forBothTimers(t, func(t *testing.T, wheel bool) {
		pg, clk := newManualPurgatory(t, wheel)
		var k WatchList
		short, long := &testOp{}, &testOp{}
		pg.Watch(short, 100*time.Millisecond, &k)
		pg.Watch(long, 20*time.Second, &k)
		if n := pg.Advance(clk.Add(99 * time.Millisecond)); n != 0 {
			t.Fatalf("%d expired before their deadline", n)
		}
		if n := pg.Advance(clk.Add(time.Millisecond)); n != 1 || !short.expired.Load() || short.completed.Load() != 1 {
			t.Fatalf("at the deadline: %d expired, short completed %d", n, short.completed.Load())
		}
		if n := pg.Advance(clk.Add(19900 * time.Millisecond)); n != 1 || !long.expired.Load() {
			t.Fatalf("at 20 s: %d expired", n)
		}
		if pg.Pending() != 0 || pg.Expired() != 2 {
			t.Fatalf("pending %d expired %d", pg.Pending(), pg.Expired())
		}
	})
}

// Kafka: forceComplete is guarded by a compare-and-swap: an operation
// raced by many events and its expiry completes exactly once. Run with
// -race: TryComplete and OnComplete of one operation never overlap.
func TestPurgatoryCompletesOnceUnderRaces(t *testing.T) {
	forBothTimers(t, func(t *testing.T, wheel bool) {
		clk := &manualClock{now: time.Unix(1000, 0)}
		pg := NewPurgatory(PurgatoryConfig{Clock: clk.Now, Manual: true, btree: !wheel, PurgeInterval: 10})
		keys := make([]WatchList, 4)
		ops := make([]*testOp, 500)
		for i := range ops {
			ops[i] = &testOp{}
			pg.Watch(ops[i], time.Duration(i%50)*time.Millisecond, &keys[i%4], &keys[(i+1)%4])
		}
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range ops {
					if i%8 == g {
						ops[i].ready.Store(true)
					}
					keys[(i+g)%4].CheckAndComplete()
				}
			})
		}
		wg.Go(func() {
			for range 60 {
				pg.Advance(clk.Add(time.Millisecond))
			}
		})
		wg.Wait()
		pg.Close()
		for i, op := range ops {
			if op.completed.Load() != 1 {
				t.Fatalf("op %d completed %d times", i, op.completed.Load())
			}
		}
		if pg.Pending() != 0 {
			t.Fatalf("pending %d after all completed", pg.Pending())
		}
	})
}

// Kafka: watch lists are purged of operations completed elsewhere (by
// another key or by expiry) every purge interval.
func TestPurgatoryPurgesCompletedOperations(t *testing.T) {
	pg := NewPurgatory(PurgatoryConfig{Manual: true, PurgeInterval: 100})
	defer pg.Close()
	var quiet, busy WatchList
	for range 1000 {
		op := &testOp{}
		pg.Watch(op, time.Hour, &quiet, &busy)
		op.ready.Store(true)
		busy.CheckAndComplete() // completes op; quiet never sees an event
	}
	if got := quiet.Len(); got > 2*100+1 {
		t.Fatalf("quiet list holds %d completed operations, purge interval 100", got)
	}
	if pg.Pending() != 0 {
		t.Fatalf("pending %d", pg.Pending())
	}
}

// Close answers every waiting operation (as expired), and an operation
// watched after Close completes at once.
func TestPurgatoryCloseCompletesWaiting(t *testing.T) {
	pg := NewPurgatory(PurgatoryConfig{})
	var k WatchList
	ops := []*testOp{{}, {}, {}}
	for _, op := range ops {
		pg.Watch(op, time.Hour, &k)
	}
	pg.Close()
	late := &testOp{}
	pg.Watch(late, time.Hour, &k)
	for i, op := range append(ops, late) {
		if op.completed.Load() != 1 || !op.expired.Load() {
			t.Fatalf("op %d: completed %d expired %v", i, op.completed.Load(), op.expired.Load())
		}
	}
}

// The reaper goroutine expires operations on the wall clock, and an
// operation with a deadline earlier than the one it sleeps for wakes it.
func TestPurgatoryReaperExpires(t *testing.T) {
	pg := NewPurgatory(PurgatoryConfig{})
	defer pg.Close()
	var k WatchList
	done := make(chan time.Time, 2)
	long := &testOp{onDone: func() { done <- time.Now() }}
	short := &testOp{onDone: func() { done <- time.Now() }}
	start := time.Now()
	pg.Watch(long, time.Hour, &k)
	pg.Watch(short, 30*time.Millisecond, &k)
	select {
	case at := <-done:
		if el := at.Sub(start); el < 30*time.Millisecond || !short.expired.Load() {
			t.Fatalf("expired after %v (before its timeout), short expired %v", el, short.expired.Load())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the reaper did not expire a 30 ms operation")
	}
	if long.completed.Load() != 0 {
		t.Fatal("the hour-long operation completed")
	}
}

// racyOp becomes ready during its first TryComplete, as if an event
// happened between the try and the watch and found no watcher yet.
type racyOp struct{ testOp }

func (o *racyOp) TryComplete() bool {
	if o.tries.Add(1) == 1 {
		o.ready.Store(true)
		return false
	}
	return o.ready.Load()
}

// Kafka: safeTryCompleteOrElse tries once more after watching, so an
// event between the first try and the watch is not missed.
func TestPurgatoryTriesAgainAfterWatching(t *testing.T) {
	pg, _ := newManualPurgatory(t, false)
	var k WatchList
	op := &racyOp{}
	if !pg.Watch(op, time.Hour, &k) || op.completed.Load() != 1 || pg.Pending() != 0 {
		t.Fatalf("an operation satisfied between its try and its watch waits: completed %d", op.completed.Load())
	}
}

// reentrantOp's completion causes an event on the key it is watched on,
// as a follower's fetch does: completing it reads for the follower,
// which advances the high watermark and wakes the partition's watchers.
type reentrantOp struct {
	testOp
	key *WatchList
}

func (o *reentrantOp) OnComplete(expired bool) {
	o.key.CheckAndComplete()
	o.testOp.OnComplete(expired)
}

// An operation whose completion wakes its own key completes, once,
// whether an event or its timeout completes it; it must not wait for
// the lock its own completion holds (Kafka relies on a reentrant lock
// there, see maybeTryComplete).
func TestPurgatoryCompletionThatWakesItsOwnKey(t *testing.T) {
	forBothTimers(t, func(t *testing.T, wheel bool) {
		pg, clock := newManualPurgatory(t, wheel)
		var k WatchList
		byEvent := &reentrantOp{key: &k}
		byTimeout := &reentrantOp{key: &k}
		pg.Watch(byEvent, time.Second, &k)
		pg.Watch(byTimeout, 2*time.Second, &k)
		done := make(chan struct{})
		go func() {
			defer close(done)
			byEvent.ready.Store(true)
			k.CheckAndComplete()
			pg.Advance(clock.Add(3 * time.Second))
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("an operation waking its own key deadlocked")
		}
		if byEvent.completed.Load() != 1 || byEvent.expired.Load() || byTimeout.completed.Load() != 1 || !byTimeout.expired.Load() {
			t.Fatalf("by event: completed %d expired %v; by timeout: completed %d expired %v",
				byEvent.completed.Load(), byEvent.expired.Load(), byTimeout.completed.Load(), byTimeout.expired.Load())
		}
	})
}
