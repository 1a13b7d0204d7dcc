package replica

import (
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/varve/varve/segment"
	"github.com/varve/varve/segment/segmenttest"
)

const benchOps = 10_000

// benchDeadlines are 10,000 deadlines spread over 30 s, as max.wait.ms
// (500 ms by default) and request timeouts (30 s) spread them.
func benchDeadlines() []int64 {
	rng := rand.New(rand.NewPCG(1, 2))
	d := make([]int64, benchOps)
	for i := range d {
		d[i] = 1 + rng.Int64N(30_000)
	}
	return d
}

// BenchmarkTimer compares the two timers at 10,000 operations: adding
// them, cancelling them all (events completed them), and expiring them
// all (the reaper walks the timer to each next deadline). ns/entry is
// the cost per operation of the step named.
func BenchmarkTimer(b *testing.B) {
	deadlines := benchDeadlines()
	for _, k := range timerKinds {
		entries := make([]timerEntry, benchOps)
		fill := func() timer {
			tm := k.new(0)
			for i := range entries {
				entries[i] = timerEntry{deadline: deadlines[i]}
				tm.add(&entries[i])
			}
			return tm
		}
		b.Run(k.name+"/add", func(b *testing.B) {
			for b.Loop() {
				fill()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchOps), "ns/entry")
		})
		b.Run(k.name+"/cancel", func(b *testing.B) {
			var spent time.Duration
			for b.Loop() {
				tm := fill()
				start := time.Now()
				for i := range entries {
					tm.remove(&entries[i])
				}
				spent += time.Since(start)
			}
			b.ReportMetric(float64(spent.Nanoseconds())/float64(b.N*benchOps), "ns/entry")
		})
		b.Run(k.name+"/expire", func(b *testing.B) {
			var spent time.Duration
			var out []*timerEntry
			for b.Loop() {
				tm := fill()
				start := time.Now()
				for n, ok := tm.next(); ok; n, ok = tm.next() {
					out = tm.expire(n, out[:0])
				}
				spent += time.Since(start)
			}
			b.ReportMetric(float64(spent.Nanoseconds())/float64(b.N*benchOps), "ns/entry")
		})
	}
}

// benchPartitions opens n partitions on small logs.
func benchPartitions(b *testing.B, n int) []*Partition {
	dir := b.TempDir()
	parts := make([]*Partition, n)
	for i := range parts {
		tp := segment.TopicPartition{Topic: "bench", Partition: int32(i)}
		l, err := segment.Open(filepath.Join(dir, tp.String()), logConfig(1<<20, 4096))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { l.Close() })
		parts[i] = NewPartition(tp, TopicID{1}, l, 0)
	}
	return parts
}

// parkFetches parks n fetches of min.bytes 1, spread round robin over
// parts, each waiting a minute; unless bare, a completion reads its
// partition, as a fetch response does.
func parkFetches(pg *Purgatory, parts []*Partition, n int, bare bool) {
	for i := range n {
		p := parts[i%len(parts)]
		f := &DelayedFetch{MinBytes: 1, MaxBytes: 1 << 20,
			Parts:    []FetchPartition{{Partition: p, Offset: p.EndOffset(), MaxBytes: 1 << 20}},
			Complete: func(bool) {}}
		if !bare {
			f.Complete = func(bool) { p.Read(p.EndOffset()-1, 1<<20, true) }
		}
		pg.Watch(f, time.Minute, p.Watchers())
	}
}

func heapAlloc() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkParkFetches parks 10,000 fetches over 1,000 partitions (ten
// per partition) with each timer: ns/fetch is the cost of parking one,
// bytes/parked the memory each holds while parked (from
// runtime.MemStats: the DelayedFetch, its purgatory entry and timer
// place, its watch-list slot).
func BenchmarkParkFetches(b *testing.B) {
	parts := benchPartitions(b, 1000)
	for _, kind := range []string{"btree", "wheel"} {
		b.Run(kind, func(b *testing.B) {
			var bytes uint64
			b.StopTimer()
			for range b.N {
				pg := NewPurgatory(PurgatoryConfig{Manual: true, btree: kind == "btree"})
				before := heapAlloc()
				b.StartTimer()
				parkFetches(pg, parts, benchOps, false)
				b.StopTimer()
				bytes += heapAlloc() - before
				pg.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchOps), "ns/fetch")
			b.ReportMetric(float64(bytes)/float64(b.N*benchOps), "bytes/parked")
		})
	}
}

// BenchmarkAppendWakesWatchers is one append to one of 1,000 partitions
// over which 10,000 fetches are parked: it completes the ten watching
// its partition (each re-reads its partition, as a fetch's completion
// does; "wheel-bare" completes without reading, to show the purgatory's
// own share). "alone" is the same append with no one watching: the ratio
// of their ns/append is the wake-up's cost (ns/op adds the re-parking of
// ten fetches after each append, which keeps 10,000 parked).
func BenchmarkAppendWakesWatchers(b *testing.B) {
	const partitions = 1000
	parts := benchPartitions(b, partitions)
	batch := segmenttest.Batch(b, 1, 100, 1, 0)
	for _, kind := range []string{"alone", "btree", "wheel", "wheel-bare"} {
		b.Run(kind, func(b *testing.B) {
			pg := NewPurgatory(PurgatoryConfig{Manual: true, btree: kind == "btree"})
			defer pg.Close()
			bare := kind == "wheel-bare"
			if kind != "alone" {
				parkFetches(pg, parts, benchOps, bare)
			}
			var spent time.Duration // the appends alone, without the re-parking
			b.ResetTimer()
			for i := range b.N {
				p := parts[i%partitions]
				start := time.Now()
				if _, err := p.AppendAsLeader(batch); err != nil {
					b.Fatal(err)
				}
				spent += time.Since(start)
				if kind != "alone" {
					parkFetches(pg, []*Partition{p}, benchOps/partitions, bare) // back to ten
				}
			}
			b.ReportMetric(float64(spent.Nanoseconds())/float64(b.N), "ns/append")
		})
	}
}
