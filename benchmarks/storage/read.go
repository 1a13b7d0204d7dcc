package storage

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

// BatchReader reads one batch by offset the way a fetch finds it: Log.Read
// locates the batch (segment by base offset, offset index floor, header
// walk) and returns its file region, which is then copied with one pread
// into a buffer the reader reuses, so the measurement allocates nothing.
// A BatchReader is used by one goroutine.
type BatchReader struct {
	buf []byte
}

// ReadAt reads the batch holding offset and returns its bytes, valid
// until the next call.
func (r *BatchReader) ReadAt(l *segment.Log, offset int64) ([]byte, error) {
	region, err := l.Read(offset, 1) // KIP-74: at least the whole first batch
	if err != nil {
		return nil, fmt.Errorf("storage: read offset %d: %w", offset, err)
	}
	if int64(cap(r.buf)) < region.Len {
		r.buf = make([]byte, region.Len)
	}
	buf := r.buf[:region.Len]
	if _, err := region.ReadAt(buf, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("storage: read offset %d: %w", offset, err)
	}
	return buf, nil
}

// RandomReads reads batches at offsets drawn uniformly (fixed seed) from
// the log's range with read, within lim (Bytes counts the bytes read),
// and returns each read's latency.
func RandomReads(l *segment.Log, lim Limit, task Task, read func(offset int64) (int, error)) ([]time.Duration, int64, error) {
	rng := rand.New(rand.NewPCG(1, 2))
	lo, hi := l.StartOffset(), l.EndOffset()
	if hi <= lo {
		return nil, 0, fmt.Errorf("storage: random reads: empty log")
	}
	samples := make([]time.Duration, 0, max(lim.MinOps, 1<<16)) // no growth while timing
	var bytes int64
	start := time.Now()
	for !lim.done(len(samples), bytes, start) {
		off := lo + rng.Int64N(hi-lo)
		t0 := time.Now()
		n, err := read(off)
		samples = append(samples, time.Since(t0))
		if err != nil {
			return samples, bytes, err
		}
		bytes += int64(n)
		if len(samples)%1024 == 0 {
			task.SetCurrent(progressOf(lim, bytes, start))
		}
	}
	return samples, bytes, nil
}

// SequentialPass reads the whole log from its start offset to its end in
// reads of up to len(buf) bytes (Log.Read, then one pread into buf), as a
// consumer catching up would, and returns the bytes of whole batches
// read. A read that ends inside a batch is continued from that batch, so
// each byte counts once. buf must hold the largest batch.
func SequentialPass(l *segment.Log, buf []byte, task Task) (int64, error) {
	var total int64
	end := l.EndOffset()
	for off := l.StartOffset(); off < end; {
		region, err := l.Read(off, len(buf))
		if err != nil {
			return total, fmt.Errorf("storage: sequential read at %d: %w", off, err)
		}
		if region.Len > int64(len(buf)) {
			return total, fmt.Errorf("storage: sequential read at %d: batch of %d bytes exceeds the %d-byte buffer", off, region.Len, len(buf))
		}
		n, err := region.ReadAt(buf[:region.Len], 0)
		if err != nil && !errors.Is(err, io.EOF) {
			return total, fmt.Errorf("storage: sequential read at %d: %w", off, err)
		}
		whole, next := wholeBatches(buf[:n])
		if whole == 0 {
			return total, fmt.Errorf("storage: sequential read at %d: no whole batch in %d bytes", off, n)
		}
		total += int64(whole)
		off = next
		task.SetCurrent(total)
	}
	return total, nil
}

// wholeBatches returns the length of the prefix of buf made of whole
// batches and the offset after the last of them.
func wholeBatches(buf []byte) (int, int64) {
	p, next := 0, int64(-1)
	for len(buf)-p >= record.BatchHeaderSize {
		h, err := record.ParseHeader(buf[p:])
		if err != nil || h.Size() < record.BatchHeaderSize || int64(len(buf)-p) < h.Size() {
			break
		}
		p += int(h.Size())
		next = h.NextOffset()
	}
	return p, next
}
