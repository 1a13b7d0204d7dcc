package segment_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/varve/varve/segment"
	"github.com/varve/varve/segment/segmenttest"
)

// smallSegments writes n one-batch segments and returns the batches.
func smallSegments(t *testing.T, files *segment.FileCache, n int, deleteDelay time.Duration) (*segment.Log, [][]byte) {
	t.Helper()
	cfg := segment.DefaultConfig()
	cfg.SegmentBytes, cfg.SegmentIndexBytes, cfg.FS, cfg.Files, cfg.FileDeleteDelay = 100, 1024, noSyncFS(), files, deleteDelay
	l := open(t, filepath.Join(t.TempDir(), "cold-0"), cfg)
	t.Cleanup(func() { l.Close() })
	var want [][]byte
	for i := range n {
		b := segmenttest.Batch(t, 1, 8, int64(i), fixedTs+int64(i))
		info, err := l.Append(b)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, segmenttest.WithBase(b, info.FirstOffset))
	}
	l.Flush()
	return l, want
}

// Kafka keeps every segment open; we close cold ones. A Region handed
// out before its segment went cold still reads its bytes (its
// descriptor is lent for file.delete.delay.ms).
func TestRegionOutlivesEviction(t *testing.T) {
	files := segment.NewFileCache(1)
	l, want := smallSegments(t, files, 8, time.Minute)
	r, err := l.Read(0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	for off := int64(1); off < 8; off++ { // push segment 0 out of the cache
		if _, err := l.ReadBytes(off, 1<<20); err != nil {
			t.Fatal(err)
		}
	}
	if files.Open() > 1 {
		t.Fatalf("%d sealed segments open, bound 1", files.Open())
	}
	got, err := r.Bytes()
	if err != nil {
		t.Fatalf("region of an evicted segment: %v", err)
	}
	if !bytes.Equal(got[:len(want[0])], want[0]) {
		t.Fatal("region of an evicted segment holds other bytes")
	}
}

// Reads, time lookups and eviction race: with a cache of two segments,
// eight readers over twenty segments keep closing each other's files,
// and every read still returns the right batch (go test -race).
func TestConcurrentReadsWithEviction(t *testing.T) {
	files := segment.NewFileCache(2)
	l, want := smallSegments(t, files, 20, time.Millisecond)
	opensBefore := files.Opens()
	// Segments rolled by the appends stay pinned until their flush on
	// roll, which runs in the background: on a loaded machine the first
	// reads may all find them open. Read on until one was reopened.
	deadline := time.Now().Add(10 * time.Second)
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for i := 0; i < 300 || (files.Opens() == opensBefore && time.Now().Before(deadline)); i++ {
				off := rng.Int64N(int64(len(want)))
				got, err := l.ReadBytes(off, 1)
				if err != nil || !bytes.Equal(got, want[off]) {
					errs <- fmt.Sprintf("read %d: %v, or wrong batch", off, err)
					return
				}
				if o, _, ok, err := l.OffsetForTime(fixedTs + off); err != nil || !ok || o != off {
					errs <- fmt.Sprintf("offset for time %d: %d %v %v", fixedTs+off, o, ok, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	if files.Opens() == opensBefore {
		t.Fatal("no cold segment was reopened: the cache did not evict")
	}
	if files.Open() > 2 {
		t.Fatalf("%d sealed segments open, bound 2", files.Open())
	}
}

// Rolling, retention and truncation work on cold segments: truncating
// into a cold sealed segment makes it the active one again.
func TestTruncateIntoColdSegment(t *testing.T) {
	files := segment.NewFileCache(1)
	l, want := smallSegments(t, files, 10, time.Millisecond)
	if err := l.TruncateTo(3); err != nil {
		t.Fatal(err)
	}
	if _, err := l.DeleteSegmentsBefore(1); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, l)
	if len(got) != 2 || !bytes.Equal(got[0], want[1]) || !bytes.Equal(got[1], want[2]) {
		t.Fatalf("after truncation read %d batches, want offsets 1 and 2", len(got))
	}
	if _, err := l.Append(segmenttest.Batch(t, 1, 8, 99, fixedTs+99)); err != nil {
		t.Fatal(err)
	}
}
