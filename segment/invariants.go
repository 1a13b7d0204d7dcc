package segment

import "fmt"

// checkAppend verifies, in builds with invariants enabled (the race
// detector or -tags invariants), what an append must leave true: offsets
// only move forward, the new batches start at or after the old log end,
// and no index entry points at or past the end of the segment's bytes.
// A violation is a bug in this package, not bad input, so it panics.
// REQUIRES the writer lock.
func checkAppend(s *Segment, oldEnd, first, next, newSize int64) {
	switch {
	case first < oldEnd:
		panic(fmt.Sprintf("invariant: append at %d below the log end %d", first, oldEnd))
	case next <= first:
		panic(fmt.Sprintf("invariant: append of [%d, %d) does not advance", first, next))
	case next-1-s.base > 1<<31-1:
		panic(fmt.Sprintf("invariant: offset %d does not fit segment %d's 32-bit relative offsets", next-1, s.base))
	}
	if n := s.files().offsets.Entries(); n > 0 {
		if e := s.files().offsets.Entry(n - 1); e.Position >= newSize || e.Offset >= next {
			panic(fmt.Sprintf("invariant: index entry (%d at %d) past the segment's end (%d bytes, next offset %d)", e.Offset, e.Position, newSize, next))
		}
	}
}
