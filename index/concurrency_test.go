package index

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
)

// The concurrency contract of doc.go: one writer appending, truncating,
// trimming and re-growing (every remap path) while readers look up. Every
// entry encodes its own position (position = 7*relative offset + 3), and after
// each truncation or reset the writer skips ahead, so a slot is rewritten with
// a different pair: a torn read or a read of a half-rewritten slot shows as a
// mismatched pair. Run with -race.
func TestOffsetIndexConcurrentLookupsDuringAppends(t *testing.T) {
	const base = 1000
	ix := openOffset(t, base, 64*1024) // small, so the writer trims and resets often
	var done atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for r := range 3 {
		wg.Go(func() { errs <- lookupOffsetsUntil(&done, ix, base, uint64(r)) })
	}
	writeErr := churnOffsets(ix, base, 40_000)
	done.Store(true)
	wg.Wait()
	close(errs)
	if writeErr != nil {
		t.Fatal(writeErr)
	}
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// churnOffsets appends count entries, truncating, trimming, re-growing and
// resetting along the way.
func churnOffsets(ix *OffsetIndex, base int64, count int) error {
	rel := int64(0)
	for i := range count {
		rel++
		if err := ix.Append(base+rel, 7*rel+3); err != nil {
			return fmt.Errorf("append %d: %w", i, err)
		}
		var err error
		switch {
		case ix.IsFull():
			err = ix.Reset()
			rel = int64(i % 13)
		case i%997 == 0:
			err = ix.TruncateTo(base + rel - 50)
			rel = max(ix.LastOffset()-base, 0) + 1 + int64(i%7)
		case i%1499 == 0:
			if err = ix.TrimToValidSize(); err == nil {
				err = ix.Resize(64 * 1024)
			}
		case i%3001 == 0:
			err = ix.Flush()
		}
		if err != nil {
			return fmt.Errorf("step %d: %w", i, err)
		}
	}
	return nil
}

func lookupOffsetsUntil(done *atomic.Bool, ix *OffsetIndex, base int64, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 42))
	for !done.Load() {
		target := base + rng.Int64N(9000)
		got := ix.Lookup(target)
		if got.Offset > target || got.Offset < base {
			return fmt.Errorf("Lookup(%d) = %+v, not a floor", target, got)
		}
		if got.Offset != base && got.Position != 7*(got.Offset-base)+3 {
			return fmt.Errorf("Lookup(%d) = %+v, a torn or stale entry", target, got)
		}
		if n := ix.Entries(); n > ix.MaxEntries() && ix.MaxEntries() > 0 {
			return fmt.Errorf("Entries %d > MaxEntries %d", n, ix.MaxEntries())
		}
	}
	return nil
}

// Same contract for the time index: timestamp = 3*offset + 1.
func TestTimeIndexConcurrentLookupsDuringAppends(t *testing.T) {
	ix := openTime(t, 0, 48*1024)
	var done atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for r := range 3 {
		wg.Go(func() { errs <- lookupTimesUntil(&done, ix, uint64(r)) })
	}
	writeErr := churnTimes(ix, 30_000)
	done.Store(true)
	wg.Wait()
	close(errs)
	if writeErr != nil {
		t.Fatal(writeErr)
	}
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func churnTimes(ix *TimeIndex, count int) error {
	off := int64(0)
	for i := range count {
		off++
		if err := ix.MaybeAppend(3*off+1, off, false); err != nil {
			return fmt.Errorf("append %d: %w", i, err)
		}
		var err error
		switch {
		case ix.IsFull():
			err = ix.Reset()
			off = int64(i % 11)
		case i%887 == 0:
			err = ix.TruncateTo(off - 30)
			off = max(ix.LastEntry().Offset, 0) + 1 + int64(i%5)
		case i%1201 == 0:
			if err = ix.TrimToValidSize(); err == nil {
				err = ix.Resize(48 * 1024)
			}
		}
		if err != nil {
			return fmt.Errorf("step %d: %w", i, err)
		}
	}
	return nil
}

func lookupTimesUntil(done *atomic.Bool, ix *TimeIndex, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 7))
	for !done.Load() {
		target := rng.Int64N(13000)
		got := ix.Lookup(target)
		if got.Timestamp == NoTimestamp {
			continue
		}
		if got.Timestamp > target || got.Timestamp != 3*got.Offset+1 {
			return fmt.Errorf("Lookup(%d) = %+v, torn, stale or not a floor", target, got)
		}
	}
	return nil
}
