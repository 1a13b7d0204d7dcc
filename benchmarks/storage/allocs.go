package storage

import (
	"fmt"
	"runtime"

	"github.com/varve/varve/segment"
)

// AllocsPerAppend appends batch to l n times (after one untimed warm-up
// append) and returns the heap allocations per append, counted the way
// testing.AllocsPerRun counts them: the process-wide malloc count before
// and after, divided by n. Other goroutines that allocate meanwhile (a
// progress bar) add to it, so the figure is an upper bound; with
// allocation-free appends it stays below one per append for large n.
func AllocsPerAppend(l *segment.Log, batch []byte, n int) (float64, error) {
	if _, err := l.Append(batch); err != nil {
		return 0, fmt.Errorf("storage: allocs per append: %w", err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 0; i < n; i++ {
		if _, err := l.Append(batch); err != nil {
			return 0, fmt.Errorf("storage: allocs per append: %w", err)
		}
	}
	runtime.ReadMemStats(&after)
	return float64(after.Mallocs-before.Mallocs) / float64(n), nil
}
