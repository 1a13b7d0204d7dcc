package index

import (
	"math/rand/v2"
	"testing"
)

// Benchmarks run against a full default-size index (10 MiB) in the page
// cache, so they measure the search's CPU cost, not page faults: the warm and
// cold cases differ by the number of probes (about 11 against 21), not by
// disk reads. Lookups report no bytes/op: a lookup moves no data. Appends
// report the entry bytes written to the mapping.
//
//	go test -run '^$' -bench . -benchtime 2s ./index/

// fullOffsetIndex fills a default-size offset index: offsets 2i+1, positions
// 1024*(i+1), which keeps 1,310,720 entries under the 2 GiB position limit.
func fullOffsetIndex(b *testing.B) *OffsetIndex {
	ix := openOffset(b, 0, DefaultMaxIndexSize)
	for i := range int64(ix.MaxEntries()) {
		if err := ix.Append(2*i+1, 1024*(i+1)); err != nil {
			b.Fatal(err)
		}
	}
	return ix
}

// targets draws 4096 offsets from slots [lo, hi) of an index whose entry i
// has key 2i+1 (the same scheme for offsets and timestamps below).
func targets(lo, hi int) []int64 {
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([]int64, 4096)
	for i := range out {
		out[i] = 2*int64(lo+rng.IntN(hi-lo)) + 1
	}
	return out
}

func BenchmarkOffsetIndexLookup(b *testing.B) {
	ix := fullOffsetIndex(b)
	n := ix.Entries()
	warm := warmEntries(OffsetEntrySize)
	for _, c := range []struct {
		name   string
		lo, hi int
	}{{"warm", n - warm, n}, {"cold", 0, n - warm - 1}} {
		ts := targets(c.lo, c.hi)
		b.Run(c.name, func(b *testing.B) {
			var sink int64
			i := 0
			for b.Loop() {
				sink += ix.Lookup(ts[i&4095]).Position
				i++
			}
			if sink == 0 {
				b.Fatal("no lookup found an entry")
			}
		})
	}
}

// BenchmarkOffsetIndexLookupParallel: warm lookups from every core at once,
// all taking the mapping's read lock.
func BenchmarkOffsetIndexLookupParallel(b *testing.B) {
	ix := fullOffsetIndex(b)
	ts := targets(ix.Entries()-warmEntries(OffsetEntrySize), ix.Entries())
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			ix.Lookup(ts[i&4095])
			i++
		}
	})
}

// BenchmarkOffsetIndexAppend appends into a preallocated, mapped file; a full
// index is reset off the clock.
func BenchmarkOffsetIndexAppend(b *testing.B) {
	ix := openOffset(b, 0, DefaultMaxIndexSize)
	b.SetBytes(OffsetEntrySize)
	i := int64(0)
	for b.Loop() {
		if ix.IsFull() {
			b.StopTimer()
			if err := ix.Reset(); err != nil {
				b.Fatal(err)
			}
			i = 0
			b.StartTimer()
		}
		if err := ix.Append(i+1, 1024*(i+1)); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkTimeIndexLookup(b *testing.B) {
	ix := openTime(b, 0, DefaultMaxIndexSize)
	for i := range int64(ix.MaxEntries() - 1) {
		if err := ix.MaybeAppend(2*i+1, i, false); err != nil {
			b.Fatal(err)
		}
	}
	n := ix.Entries()
	warm := warmEntries(TimeEntrySize)
	for _, c := range []struct {
		name   string
		lo, hi int
	}{{"warm", n - warm, n}, {"cold", 0, n - warm - 1}} {
		ts := targets(c.lo, c.hi)
		b.Run(c.name, func(b *testing.B) {
			var sink int64
			i := 0
			for b.Loop() {
				sink += ix.Lookup(ts[i&4095]).Offset
				i++
			}
			if sink == 0 {
				b.Fatal("no lookup found an entry")
			}
		})
	}
}

func BenchmarkTimeIndexMaybeAppend(b *testing.B) {
	ix := openTime(b, 0, DefaultMaxIndexSize)
	b.SetBytes(TimeEntrySize)
	i := int64(0)
	for b.Loop() {
		if ix.IsFull() {
			b.StopTimer()
			if err := ix.Reset(); err != nil {
				b.Fatal(err)
			}
			i = 0
			b.StartTimer()
		}
		if err := ix.MaybeAppend(i+1, i, false); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
