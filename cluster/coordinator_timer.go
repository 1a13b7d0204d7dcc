package cluster

import (
	"sync/atomic"
	"time"
)

// coordinatorTimer is the timer goroutine's half of a coordinator's
// wiring, the same for groups (groups.go) and transactions (txns.go):
// the goroutine sleeps until the earliest deadline of any partition,
// ticks the partitions that are due, and is woken early by a kick when
// a call brings a deadline forward.
type coordinatorTimer struct {
	target atomic.Int64 // unix nanos the goroutine sleeps until; 0: computing
	wake   chan struct{}
}

func newCoordinatorTimer() *coordinatorTimer {
	return &coordinatorTimer{wake: make(chan struct{}, 1)}
}

// kick wakes the goroutine when next (ok: there is one) is earlier than
// what it sleeps until.
func (t *coordinatorTimer) kick(next time.Time, ok bool) {
	if target := t.target.Load(); ok && (target == 0 || next.UnixNano() < target) {
		select {
		case t.wake <- struct{}{}:
		default:
		}
	}
}

// loop runs tickDue (which ticks what is due at now and returns the
// earliest deadline left, zero if none) until stop is closed.
func (t *coordinatorTimer) loop(stop <-chan struct{}, tickDue func(now time.Time) time.Time) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		// target 0 while computing: a kick meanwhile always wakes the
		// next select, so a deadline added now is never slept past.
		t.target.Store(0)
		next := tickDue(time.Now())
		wait := time.Hour
		if !next.IsZero() {
			wait = max(time.Until(next), 0)
			t.target.Store(next.UnixNano())
		} else {
			t.target.Store(time.Now().Add(wait).UnixNano())
		}
		timer.Reset(wait)
		select {
		case <-stop:
			return
		case <-t.wake:
		case <-timer.C:
		}
	}
}
