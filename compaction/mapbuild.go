package compaction

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

// minMapSlots is the smallest table a pass allocates.
const minMapSlots = 1024

// buildMap is Kafka's Cleaner.buildOffsetMap: it reads the dirty section
// [firstDirty, firstUncleanable) in offset order and records each key's
// last offset. It stops when the map refuses a new key; p.latest is then
// the last offset the map accounts for, so the pass cleans up to there
// and the next pass continues after it.
func (p *pass) buildMap() error {
	p.latest = p.c.firstDirty - 1
	dirty := p.dirtySegments()
	slots, err := p.wantSlots(dirty)
	if err != nil {
		return err
	}
	p.w.m.Reset(p.c.firstDirty, slots, p.w.cfg.IOBufferLoadFactor)
	p.mapTxns = newTxnState()
	for _, s := range dirty {
		p.mapTxns.add(p.c.log.AbortedTransactions(s.BaseOffset, s.NextOffset))
		full, err := p.mapSegment(s)
		if err != nil || full {
			return err
		}
	}
	return nil
}

// dirtySegments lists the segments overlapping [firstDirty, firstUncleanable).
func (p *pass) dirtySegments() []segment.SegmentInfo {
	var out []segment.SegmentInfo
	for _, s := range p.c.segs {
		if s.BaseOffset >= p.c.firstUncleanable {
			break
		}
		if s.NextOffset > p.c.firstDirty {
			out = append(out, s)
		}
	}
	return out
}

// wantSlots sizes the table for the dirty section, so that a small
// section does not pay for a large, cache-hostile table: it reads the
// batch headers of the first chunk of the section, takes their records
// per byte, and allows twice that many keys over the whole section. Data
// whose records get much smaller further on may fill the table early;
// the pass then stops there and the next one continues, as with a full
// map.
func (p *pass) wantSlots(dirty []segment.SegmentInfo) (int, error) {
	var bytes int64
	for _, s := range dirty {
		bytes += s.Size
	}
	if len(dirty) == 0 {
		return minMapSlots, nil
	}
	perByte, err := p.sampleRecordsPerByte(dirty[0])
	if err != nil {
		return 0, err
	}
	want := 2 * perByte * float64(bytes) / p.w.cfg.IOBufferLoadFactor
	return int(min(max(want, minMapSlots), float64(p.w.m.MaxSlots()))), nil
}

// sampleRecordsPerByte reads the headers in the first read chunk of s.
func (p *pass) sampleRecordsPerByte(s segment.SegmentInfo) (float64, error) {
	rd := p.w.rd
	if err := rd.open(p.fs, s); err != nil {
		return 0, err
	}
	defer rd.close()
	var recs, bytes int64
	for bytes < int64(rd.chunk) {
		h, b, _, err := rd.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, err
		}
		recs += int64(h.RecordCount)
		bytes += int64(len(b))
	}
	if bytes == 0 {
		return 0, nil
	}
	return float64(recs) / float64(bytes), nil
}

// mapSegment adds the segment's dirty records to the map and reports
// whether the map filled.
func (p *pass) mapSegment(s segment.SegmentInfo) (bool, error) {
	rd := p.w.rd
	if err := rd.open(p.fs, s); err != nil {
		return false, err
	}
	defer rd.close()
	for {
		h, b, _, err := rd.next()
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if h.LastOffset() < p.c.firstDirty {
			continue
		}
		if h.BaseOffset >= p.c.firstUncleanable {
			return false, nil
		}
		if full, err := p.mapBatch(h, b); err != nil || full {
			return full, err
		}
		p.latest = h.LastOffset()
	}
}

// mapBatch puts the keys of one batch. Control batches (transaction
// markers) carry no data keys, and the batches of aborted transactions
// must not supersede anything: both are skipped, as in Kafka.
func (p *pass) mapBatch(h record.BatchHeader, b []byte) (bool, error) {
	p.stats.MapBytesRead += int64(len(b))
	if skip, err := p.mapSkips(h, b); err != nil || skip {
		if err != nil {
			err = fmt.Errorf("%w: %s: batch at offset %d: %w", ErrCorruptSegment, p.c.log.Dir(), h.BaseOffset, err)
		}
		return false, err
	}
	keys, _, err := p.w.batchKeys(h, b)
	if err != nil {
		return false, fmt.Errorf("%w: %s: batch at offset %d: %w", ErrCorruptSegment, p.c.log.Dir(), h.BaseOffset, err)
	}
	hs := &p.w.hashes
	hs.hash(p.w.m, keys, p.c.firstDirty, math.MaxInt64)
	for i := range keys {
		if hs.h1[i] == 0 {
			continue
		}
		p.stats.MapRecordsRead++
		if !p.w.m.put(hs.h1[i], hs.h2[i], keys[i].offset) {
			p.latest = keys[i].offset - 1
			p.stats.MapFull = true
			return true, nil
		}
	}
	return false, nil
}
