package compaction_test

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"

	"github.com/varve/varve/compaction"
	"github.com/varve/varve/record"
)

// Kafka sizes the offset map by log.cleaner.dedupe.buffer.size whatever
// the number of keys; a pass over 10x more distinct keys than the map
// holds must stay within that buffer plus a small constant (read buffer,
// decoder buffers, one rebuilt batch). This test measures the heap in use
// (HeapInuse, sampled every 200 µs, with GOGC=10 so garbage does not
// hide the live peak) during one pass, and times nothing.
func TestPassMemoryIsBoundedByDedupeBuffer(t *testing.T) {
	const (
		dedupe   = 1 << 20                     // 65536 slots, 58982 keys at load factor 0.9
		keys     = 10 * (dedupe / 16 * 9 / 10) // ten times what the map holds
		perBatch = 1000
		slack    = 6 << 20 // the small constant allowed on top of the map
	)
	cfg := logConfig()
	cfg.SegmentBytes = 4 << 20
	l := openLog(t, t.TempDir(), cfg)
	defer l.Close()
	b := record.NewBatchBuilder(record.CompressionNone)
	for i := 0; i < keys; i += perBatch {
		b.Reset()
		for j := i; j < min(i+perBatch, keys); j++ {
			b.Append(record.Record{Key: fmt.Appendf(nil, "key-%08d", j), Value: []byte("value-12"), Timestamp: t0.UnixMilli()})
		}
		if _, err := l.Append(must[[]byte](t)(b.Build())); err != nil {
			t.Fatal(err)
		}
	}
	roll(t, l)

	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak atomic.Uint64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var s runtime.MemStats
		for {
			runtime.ReadMemStats(&s)
			if s.HeapInuse > peak.Load() {
				peak.Store(s.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(200 * time.Microsecond):
			}
		}
	}()
	cc := compaction.DefaultConfig()
	cc.DedupeBufferSize = dedupe
	cc.Logger = quiet
	st, err := compaction.Clean(l, cc, t0)
	close(done)
	<-sampled
	if err != nil {
		t.Fatal(err)
	}
	grew := int64(peak.Load()) - int64(base)
	t.Logf("%d keys, map of %d bytes holding %d keys (full %v): heap in use grew by %.2f MiB at peak (%.2f MiB over the map)",
		keys, st.MapMemory, st.MapKeys, st.MapFull, float64(grew)/(1<<20), float64(grew-st.MapMemory)/(1<<20))
	if !st.MapFull || st.MapMemory > dedupe {
		t.Fatalf("map full %v, %d bytes; want full and at most %d bytes", st.MapFull, st.MapMemory, dedupe)
	}
	if grew > dedupe+slack {
		t.Fatalf("heap in use grew by %d bytes during the pass, more than the dedupe buffer %d + %d", grew, dedupe, slack)
	}
}
