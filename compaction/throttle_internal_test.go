package compaction

import (
	"context"
	"testing"
	"time"
)

// Kafka's Throttler (log.cleaner.io.max.bytes.per.second): once per check
// interval, if the bytes observed since the last check came faster than
// the desired rate, the caller sleeps until the rate is met.
func TestThrottlerSleepsToTheDesiredRate(t *testing.T) {
	now := time.Unix(0, 0)
	var slept []time.Duration
	th := newThrottler(1000, func() time.Time { return now })
	th.sleep = func(_ context.Context, d time.Duration) { slept = append(slept, d); now = now.Add(d) }
	ctx := context.Background()

	now = now.Add(100 * time.Millisecond)
	th.maybeThrottle(ctx, 500) // inside the 300 ms check interval: no decision
	if len(slept) != 0 {
		t.Fatalf("slept %v inside the check interval", slept)
	}
	now = now.Add(300 * time.Millisecond)
	th.maybeThrottle(ctx, 500) // 1000 bytes in 400 ms = 2500 B/s: sleep to 1 s
	if len(slept) != 1 || slept[0] != 600*time.Millisecond {
		t.Fatalf("slept %v, want [600ms]", slept)
	}
	now = now.Add(2 * time.Second)
	th.maybeThrottle(ctx, 1000) // 1000 bytes in 2 s: under the rate
	if len(slept) != 1 {
		t.Fatalf("slept %v under the rate", slept)
	}
	var unlimited *throttler
	unlimited.maybeThrottle(ctx, 1<<30) // nil: no limit, no panic
}
