package index

import (
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"pgregory.net/rapid"
)

// Kafka's cache-aware search (AbstractIndex.indexSlotRangeFor): a target at
// or above the first warm entry is answered from the warm section alone. The
// cold head here is poisoned with keys a plain binary search would follow to
// a wrong answer, so any read of it shows.
func TestWarmLookupNeverReadsColdEntries(t *testing.T) {
	const n, warm = 3000, 1024
	buf := make([]byte, n*OffsetEntrySize)
	firstHot := n - 1 - warm
	for i := range n {
		rel := uint32(10 * i)
		if i < firstHot {
			rel = math.MaxInt32 // poison: never a valid cold key for these targets
		}
		binary.BigEndian.PutUint32(buf[i*OffsetEntrySize:], rel)
	}
	col := keyColumn{buf: buf, stride: OffsetEntrySize}
	for slot := firstHot; slot < n; slot++ {
		for _, d := range []int64{0, 5, 9} {
			target := int64(10*slot) + d
			if got := floorSlot(col, n, warm, target); got != slot {
				t.Fatalf("floorSlot(%d) = %d, want %d (warm section starts at %d)", target, got, slot, firstHot)
			}
		}
	}
}

// The floor search agrees with a linear scan on any non-decreasing keys,
// including repeats, around the warm boundary.
func TestFloorSlotMatchesLinearScan(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 2500).Draw(t, "n")
		keys := make([]int64, n)
		k := rapid.Int64Range(-1000, 1000).Draw(t, "first")
		for i := range keys {
			k += rapid.Int64Range(0, 3).Draw(t, "gap") // 0: repeated keys
			keys[i] = k
		}
		buf := make([]byte, 0, n*TimeEntrySize)
		for _, k := range keys {
			buf = binary.BigEndian.AppendUint64(buf, uint64(k))
			buf = binary.BigEndian.AppendUint32(buf, 0)
		}
		col := keyColumn{buf: buf, stride: TimeEntrySize, wide: true}
		for range 20 {
			target := rapid.Int64Range(k-2*int64(n)-1010, k+5).Draw(t, "target")
			want := -1
			for i, key := range keys {
				if key <= target {
					want = i
				}
			}
			if got := floorSlot(col, n, warmEntries(TimeEntrySize), target); got != want {
				t.Fatalf("floorSlot(%d) over %d keys = %d, want %d", target, n, got, want)
			}
			wantCeil := n
			for i := n - 1; i >= 0 && keys[i] >= target; i-- {
				wantCeil = i
			}
			if got := ceilSlot(col, n, target); got != wantCeil {
				t.Fatalf("ceilSlot(%d) = %d, want %d", target, got, wantCeil)
			}
		}
	})
}

// Kafka: OffsetIndex.lookup is the floor of the target over the entries. Any
// strictly increasing sequence appended through the API, any target: Lookup
// equals the brute-force floor.
func TestOffsetLookupMatchesLinearScan(t *testing.T) {
	dir := t.TempDir()
	runs := 0
	rapid.Check(t, func(rt *rapid.T) {
		runs++
		base := rapid.Int64Range(0, 1<<50).Draw(rt, "base")
		n := rapid.IntRange(0, 3000).Draw(rt, "n")
		ix, err := OpenOffsetIndex(filepath.Join(dir, fmt.Sprintf("%d.index", runs)), base, DefaultMaxIndexSize)
		if err != nil {
			rt.Fatal(err)
		}
		defer ix.Delete()
		entries := make([]OffsetPosition, 0, n)
		off, pos := base+rapid.Int64Range(0, 5).Draw(rt, "first"), int64(0)
		for range n {
			if err := ix.Append(off, pos); err != nil {
				rt.Fatal(err)
			}
			entries = append(entries, OffsetPosition{off, pos})
			off += rapid.Int64Range(1, 40).Draw(rt, "offset gap")
			pos += rapid.Int64Range(1, 9000).Draw(rt, "position gap")
		}
		for range 30 {
			target := rapid.Int64Range(base-3, off+3).Draw(rt, "target")
			if got, want := ix.Lookup(target), linearOffsetFloor(base, entries, target); got != want {
				rt.Fatalf("Lookup(%d) over %d entries = %+v, want %+v", target, n, got, want)
			}
		}
	})
}

// Kafka: TimeIndex.lookup is the floor of the target timestamp.
func TestTimeLookupMatchesLinearScan(t *testing.T) {
	dir := t.TempDir()
	runs := 0
	rapid.Check(t, func(rt *rapid.T) {
		runs++
		n := rapid.IntRange(0, 2000).Draw(rt, "n")
		ix, err := OpenTimeIndex(filepath.Join(dir, fmt.Sprintf("%d.timeindex", runs)), 0, DefaultMaxIndexSize)
		if err != nil {
			rt.Fatal(err)
		}
		defer ix.Delete()
		var entries []TimestampOffset
		ts, off := rapid.Int64Range(0, 1e12).Draw(rt, "first ts"), int64(0)
		for range n {
			if err := ix.MaybeAppend(ts, off, false); err != nil {
				rt.Fatal(err)
			}
			entries = append(entries, TimestampOffset{ts, off})
			ts += rapid.Int64Range(1, 1000).Draw(rt, "ts gap")
			off += rapid.Int64Range(0, 50).Draw(rt, "offset gap")
		}
		for range 30 {
			target := rapid.Int64Range(-5, ts+5).Draw(rt, "target")
			if got, want := ix.Lookup(target), linearTimeFloor(0, entries, target); got != want {
				rt.Fatalf("Lookup(%d) over %d entries = %+v, want %+v", target, n, got, want)
			}
		}
	})
}
