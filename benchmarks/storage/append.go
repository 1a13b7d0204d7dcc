package storage

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/varve/varve/segment"
)

// Limit bounds a repeated workload: it stops once Bytes are done or
// Duration has passed (0: no time bound), whichever comes first, but not
// before MinOps operations.
type Limit struct {
	Bytes    int64
	Duration time.Duration
	MinOps   int
}

// done reports whether a workload that did ops operations and bytes bytes
// since start may stop.
func (lim Limit) done(ops int, bytes int64, start time.Time) bool {
	if ops < lim.MinOps {
		return false
	}
	if lim.Bytes > 0 && bytes >= lim.Bytes {
		return true
	}
	return lim.Duration > 0 && time.Since(start) >= lim.Duration
}

// AppendRun is what appending one batch again and again measured.
type AppendRun struct {
	Appends int
	Bytes   int64
	Write   time.Duration // from the first Append to the return of the last
	Total   time.Duration // Write plus the final Log.Flush
}

// WriteBps is the append throughput before the flush, in bytes/s.
func (r AppendRun) WriteBps() float64 { return bps(r.Bytes, r.Write) }

// TotalBps is the append throughput including the final flush, in bytes/s.
func (r AppendRun) TotalBps() float64 { return bps(r.Bytes, r.Total) }

// bps is bytes per second, 0 for a zero duration.
func bps(bytes int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(bytes) / d.Seconds()
}

// OpenLog opens a log for a workload: cfg as given, with a logger that
// discards recovery reports unless cfg names one.
func OpenLog(dir string, cfg segment.Config) (*segment.Log, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	l, err := segment.Open(dir, cfg)
	if err != nil {
		return nil, fmt.Errorf("storage: open log %s: %w", dir, err)
	}
	return l, nil
}

// Append appends batch to l as the leader, again and again, within lim,
// then flushes l: Log.Append validates the header and CRC and assigns the
// offsets in place each time, as it does for a producer's batch. Both the
// appends and the flush are timed, so the page cache cannot flatter the
// figure (Total) while Write still shows what the appends alone cost.
func Append(l *segment.Log, batch []byte, lim Limit, task Task) (AppendRun, error) {
	var r AppendRun
	size := int64(len(batch))
	step := max(lim.Bytes/100, size)
	next := step
	start := time.Now()
	for !lim.done(r.Appends, r.Bytes, start) {
		if _, err := l.Append(batch); err != nil {
			return r, fmt.Errorf("storage: append %d of %d bytes: %w", r.Appends, size, err)
		}
		r.Appends++
		r.Bytes += size
		if r.Bytes >= next {
			task.SetCurrent(progressOf(lim, r.Bytes, start))
			next += step
		}
	}
	r.Write = time.Since(start)
	if err := l.Flush(); err != nil {
		return r, fmt.Errorf("storage: flush after %d appends: %w", r.Appends, err)
	}
	r.Total = time.Since(start)
	return r, nil
}

// progressOf is the progress unit of a workload bounded by lim: bytes, or
// milliseconds when it is bounded by time.
func progressOf(lim Limit, bytes int64, start time.Time) int64 {
	if lim.Duration > 0 {
		return time.Since(start).Milliseconds()
	}
	return bytes
}

// progressTotal is the progress total matching progressOf.
func progressTotal(lim Limit) int64 {
	if lim.Duration > 0 {
		return lim.Duration.Milliseconds()
	}
	return lim.Bytes
}
