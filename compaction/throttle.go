package compaction

import (
	"context"
	"sync"
	"time"
)

// throttleCheckInterval is how often the throttler compares the observed
// rate with the desired one (LogCleaner builds its Throttler with
// checkIntervalMs = 300).
const throttleCheckInterval = 300 * time.Millisecond

// throttler is Kafka's kafka.utils.Throttler, shared by all the cleaner's
// threads: callers report the bytes they read or wrote; once per check
// interval, if the rate since the last check exceeds the desired rate,
// the caller sleeps long enough to bring it down. The sleep happens under
// the lock, so every thread waits: the limit is on the total.
type throttler struct {
	rate  float64 // bytes per second; Unthrottled (or <= 0) means unlimited
	now   func() time.Time
	sleep func(context.Context, time.Duration)

	mu          sync.Mutex
	periodStart time.Time
	observed    float64
}

func newThrottler(rate float64, now func() time.Time) *throttler {
	if now == nil {
		now = time.Now
	}
	return &throttler{rate: rate, now: now, sleep: sleepCtx, periodStart: now()}
}

// maybeThrottle accounts for n bytes and sleeps if the rate is too high.
func (t *throttler) maybeThrottle(ctx context.Context, n int) {
	if t == nil || t.rate <= 0 || t.rate >= Unthrottled || n <= 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.observed += float64(n)
	elapsed := t.now().Sub(t.periodStart)
	if elapsed <= throttleCheckInterval {
		return
	}
	if t.observed/elapsed.Seconds() > t.rate {
		want := time.Duration(t.observed / t.rate * float64(time.Second))
		if d := want - elapsed; d > 0 {
			t.sleep(ctx, d)
		}
	}
	t.periodStart, t.observed = t.now(), 0
}

// sleepCtx sleeps for d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
	case <-timer.C:
	}
}
