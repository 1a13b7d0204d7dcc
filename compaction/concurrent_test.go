package compaction_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/varve/varve/compaction"
	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

// Kafka: readers are never blocked by the cleaner and never see a torn
// log (LocalLog.replaceSegments swaps whole segments; C6: a fetch of a
// removed offset returns the next one kept). A reader sweeping the log
// while appends, retention (time and start offset rules) and compaction
// run on it sees, in every sweep, strictly increasing offsets, and every
// record it reads is the record written at that offset; a sweep that
// falls behind the log start offset gets ErrOffsetOutOfRange and starts
// again. Run with -race.
//
// file.delete.delay.ms is a minute here, as Kafka assumes a read finishes
// within it. (With a delay of a millisecond, package segment lets a read
// of a segment that compaction replaced, and that was closed meanwhile,
// fail with a raw "file already closed" instead of being retried or
// reported as out of range.)
func TestReaderSeesConsistentLogDuringRetentionAndCompaction(t *testing.T) {
	cfg := logConfig()
	cfg.SegmentBytes = 2048
	cfg.FileDeleteDelay = time.Minute
	l := openLog(t, t.TempDir(), cfg)
	defer l.Close()
	w := &writer{l: l, recs: map[int64]kv{}}
	for range 200 {
		w.append(t)
	}
	var clockMin atomic.Int64 // minutes after t0; batch n is written at t0 + n minutes
	clockMin.Store(200)
	clock := func() time.Time { return t0.Add(time.Duration(clockMin.Load()) * time.Minute) }

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var sweeps, outOfRange, changed atomic.Int64
	run := func(f func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := f(); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for range 2 {
		run(func() error { return sweep(l, w, &sweeps, &outOfRange) })
	}
	run(func() error { // compaction
		cc := compaction.DefaultConfig()
		cc.DedupeBufferSize = 64 * 16
		cc.Logger = quiet
		_, err := compaction.Clean(l, cc, clock())
		if errors.Is(err, compaction.ErrSegmentsChanged) {
			changed.Add(1)
			return nil
		}
		return err
	})
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) { // appends and retention, from this goroutine
		w.append(t)
		clockMin.Add(1)
		if end := l.EndOffset(); end%7 == 0 {
			if err := l.SetStartOffset(l.StartOffset() + 3); err != nil && !errors.Is(err, segment.ErrOffsetOutOfRange) {
				t.Fatal(err)
			}
		}
		if err := deleteOlderThan(l, clock().Add(-60*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("%d sweeps, %d restarted by retention, %d passes abandoned on segment changes, log start %d end %d",
		sweeps.Load(), outOfRange.Load(), changed.Load(), l.StartOffset(), l.EndOffset())
	if sweeps.Load() == 0 || l.StartOffset() == 0 {
		t.Fatalf("the test did not exercise anything: %d sweeps, log start %d", sweeps.Load(), l.StartOffset())
	}
}

// writer appends one batch of three records at a time, with keys that
// repeat, and remembers every record by offset.
type writer struct {
	l    *segment.Log
	mu   sync.Mutex
	recs map[int64]kv
	n    int
	end  int64 // every offset below it is in recs
}

func (w *writer) append(t *testing.T) {
	t.Helper()
	var recs []kv
	for i := range 3 {
		k := fmt.Sprint("k", (w.n*3+i)%17)
		if (w.n+i)%11 == 0 {
			recs = append(recs, tomb(k))
		} else {
			recs = append(recs, rec(k, fmt.Sprint("v", w.n, "-", i)))
		}
	}
	first := appendKV(t, w.l, record.CompressionNone, t0.Add(time.Duration(w.n)*time.Minute), recs...)
	w.mu.Lock()
	for i, r := range recs {
		w.recs[first+int64(i)] = r
	}
	w.end = first + int64(len(recs))
	w.n++
	w.mu.Unlock()
}

func (w *writer) recorded() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.end
}

func (w *writer) at(off int64) (kv, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r, ok := w.recs[off]
	return r, ok
}

// sweep reads the log from its start to the end the writer had recorded
// when the sweep began, in small reads.
func sweep(l *segment.Log, w *writer, sweeps, outOfRange *atomic.Int64) error {
	prev := int64(-1)
	end := w.recorded()
	for off := l.StartOffset(); off < end; {
		buf, err := l.ReadBytes(off, 500)
		if errors.Is(err, segment.ErrOffsetOutOfRange) {
			outOfRange.Add(1)
			return nil
		}
		if err != nil {
			return err
		}
		for rec, err := range record.Records(buf) {
			if err != nil {
				return fmt.Errorf("sweep at %d: %w", off, err)
			}
			if rec.Offset >= end {
				break
			}
			if rec.Offset <= prev {
				return fmt.Errorf("sweep: offset %d after %d", rec.Offset, prev)
			}
			prev = rec.Offset
			want, ok := w.at(rec.Offset)
			if !ok || string(want.Key) != string(rec.Key) || string(want.Value) != string(rec.Value) {
				return fmt.Errorf("sweep: offset %d reads %q=%q, written %q=%q", rec.Offset, rec.Key, rec.Value, want.Key, want.Value)
			}
		}
		next, err := nextOffset(buf, off)
		if err != nil {
			return err
		}
		off = next
	}
	sweeps.Add(1)
	return nil
}

// nextOffset is the offset after the last whole batch of buf.
func nextOffset(buf []byte, off int64) (int64, error) {
	next := off
	for p := 0; p < len(buf); {
		h, n, err := record.NextBatch(buf[p:], 0)
		if err != nil {
			return next, err
		}
		next = max(next, h.NextOffset())
		p += n
	}
	if next == off {
		return next, fmt.Errorf("read at %d returned no batch", off)
	}
	return next, nil
}

// deleteOlderThan is retention.ms as a retention pass applies it (package
// retention is a sibling this package does not import): it deletes the
// sealed segments, oldest first, whose records are all older than cutoff.
func deleteOlderThan(l *segment.Log, cutoff time.Time) error {
	segs := l.Segments()
	n := 0
	for n < len(segs)-1 && segs[n].LargestTimestamp < cutoff.UnixMilli() {
		n++
	}
	if n == 0 {
		return nil
	}
	_, err := l.DeleteSegmentsBefore(segs[n-1].NextOffset)
	return err
}
