package segment_test

import (
	"path/filepath"
	"testing"

	"github.com/varve/varve/segment"
	"github.com/varve/varve/segment/segmenttest"
)

// BenchmarkReadSealedColdVsWarm reads one 1 KiB batch at a time from two
// sealed segments in turn. warm: the file cache keeps both open. cold:
// the cache holds one, so every read finds its segment closed and opens
// its .log and maps both indexes again (then closes the other). The
// ratio of the two is the cost of a cold segment's first read.
//
//	go test -run '^$' -bench ReadSealedColdVsWarm ./segment
func BenchmarkReadSealedColdVsWarm(b *testing.B) {
	for _, bc := range []struct {
		name  string
		bound int
	}{{"warm", 16}, {"cold", 1}} {
		b.Run(bc.name, func(b *testing.B) {
			files := segment.NewFileCache(bc.bound)
			cfg := segment.DefaultConfig()
			cfg.SegmentBytes, cfg.Files, cfg.FS = 64<<10, files, noSyncFS()
			l, err := segment.Open(filepath.Join(b.TempDir(), "bench-0"), cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			var size int
			for l.Segments()[0].Size == 0 || len(l.Segments()) < 3 {
				batch := segmenttest.Batch(b, 1, 1000, 1, 0)
				size = len(batch)
				if _, err := l.Append(batch); err != nil {
					b.Fatal(err)
				}
			}
			l.Flush()
			second := l.Segments()[1].BaseOffset
			offs := [2]int64{0, second}
			b.SetBytes(int64(size))
			b.ResetTimer()
			for i := range b.N {
				if _, err := l.ReadBytes(offs[i%2]+int64(i/2%8), 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
