package segment_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

// One appender, several readers and a deleter at once: readers only ever
// see whole, valid batches with the right content, or a clean
// out-of-range error for offsets that were deleted under them.
func TestConcurrentReadersSeeWholeBatches(t *testing.T) {
	cfg := segment.DefaultConfig()
	cfg.SegmentBytes = 8192
	cfg.FileDeleteDelay = time.Millisecond
	l := open(t, t.TempDir(), cfg)
	defer l.Close()
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	wg.Add(1)
	go func() { // appender: batch content is a function of its base offset
		defer wg.Done()
		for i := 0; i < 3000 && !stop.Load(); i++ {
			b, err := killBatch(l.EndOffset())
			if err == nil {
				_, err = l.Append(b)
			}
			if err != nil {
				errs <- err
				return
			}
		}
		stop.Store(true)
	}()
	wg.Add(1)
	go func() { // deleter: keeps the log short, as retention would
		defer wg.Done()
		for !stop.Load() {
			if _, err := l.DeleteSegmentsBefore(l.EndOffset() - 500); err != nil {
				errs <- err
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	var reads atomic.Int64
	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if err := readAndCheck(l); err != nil {
					errs <- err
					stop.Store(true)
					return
				}
				reads.Add(1)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if reads.Load() < 100 {
		t.Fatalf("only %d reads ran", reads.Load())
	}
}

// readAndCheck reads from a random offset and checks every batch it got.
func readAndCheck(l *segment.Log) error {
	start, end := l.StartOffset(), l.EndOffset()
	if end == start {
		return nil
	}
	off := start + rand.Int64N(end-start)
	buf, err := l.ReadBytes(off, rand.IntN(64<<10))
	if errors.Is(err, segment.ErrOffsetOutOfRange) && off < l.StartOffset() {
		return nil // deleted under us: the clean answer
	}
	if err != nil {
		return err
	}
	for p := 0; p < len(buf); {
		h, err := record.ValidateBatch(buf[p:])
		if err != nil {
			// ValidateBatch wants exactly one batch; split first.
			var n int
			h, n, err = record.NextBatch(buf[p:], len(buf)-p)
			if err != nil {
				return err
			}
			if _, err := record.ValidateBatch(buf[p : p+n]); err != nil {
				return err
			}
		}
		want, err := killBatch(h.BaseOffset)
		if err != nil {
			return err
		}
		if !bytes.Equal(buf[p+8:p+int(h.Size())], want[8:]) {
			return errors.New("a batch read back differs from what was appended at its offset")
		}
		p += int(h.Size())
	}
	return nil
}

// Readers racing a cleaner that keeps swapping segments for identical
// copies (file.delete.delay.ms of 1 ms, so old files close under reads)
// never see an error or a wrong byte: a read whose segment was replaced
// is retried on the live ones.
func TestReadersSurviveSegmentReplacement(t *testing.T) {
	// No fsyncs: this is about file handles, not durability.
	cfg := segment.DefaultConfig()
	cfg.SegmentBytes = 4096
	cfg.FileDeleteDelay = time.Millisecond
	cfg.FS = noSyncFS()
	l := open(t, t.TempDir(), cfg)
	defer l.Close()
	for i := 0; i < 200; i++ {
		b, err := killBatch(l.EndOffset())
		if err == nil {
			_, err = l.Append(b)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	wg.Add(1)
	go func() { // the "cleaner": copy a sealed segment and swap it in
		defer wg.Done()
		defer stop.Store(true)
		for i := 0; i < 300; i++ {
			segs := l.Segments()
			s := segs[i%(len(segs)-1)]
			data, err := l.ReadBytes(s.BaseOffset, int(s.Size))
			if err != nil {
				errs <- err
				return
			}
			c, err := l.NewCleanedSegment(s.BaseOffset)
			if err == nil {
				err = c.Append(data[:s.Size])
			}
			if err == nil {
				err = l.ReplaceSegments([]*segment.CleanedSegment{c}, []int64{s.BaseOffset})
			}
			if err != nil {
				errs <- err
				return
			}
		}
	}()
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if err := readAndCheck(l); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
