package kafkabench

import (
	"context"
	"time"
)

// throttle paces one sender at perSec records per second, as Kafka's
// ThroughputThrottler does: it sleeps only when the sender is ahead of
// schedule by at least minSleep, then lets it catch up in a burst, so a
// high rate costs no sleep per record. perSec <= 0 means unlimited.
type throttle struct {
	perSec float64
	start  time.Time
}

// minSleep is the smallest lead worth a sleep (Kafka uses 2 ms).
const minSleep = time.Millisecond

func newThrottle(perSec float64) throttle {
	return throttle{perSec: perSec, start: time.Now()}
}

// wait blocks until record number sent (0-based) is due.
func (t throttle) wait(ctx context.Context, sent int64) error {
	if t.perSec <= 0 {
		return nil
	}
	due := t.start.Add(time.Duration(float64(sent) / t.perSec * float64(time.Second)))
	lead := time.Until(due)
	if lead < minSleep {
		return nil
	}
	timer := time.NewTimer(lead)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
