package compaction

import (
	"errors"
	"fmt"
	"io"

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
	p.w.m.Reset(p.c.firstDirty, p.wantSlots(), p.w.cfg.IOBufferLoadFactor)
	for _, s := range p.c.segs {
		if s.NextOffset <= p.c.firstDirty {
			continue
		}
		if s.BaseOffset >= p.c.firstUncleanable {
			break
		}
		full, err := p.mapSegment(s)
		if err != nil || full {
			return err
		}
	}
	return nil
}

// wantSlots sizes the table for the dirty section: a record takes at
// least 7 bytes, so bytes/4 slots hold every key of uncompressed data
// (very compressible data may fill it; the pass then stops early).
func (p *pass) wantSlots() int {
	dirty := max(p.c.cleanableBytes, 0)
	want := float64(dirty/4) / p.w.cfg.IOBufferLoadFactor
	return int(min(max(want, minMapSlots), float64(p.w.m.MaxSlots())))
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
// markers) carry no data keys and are skipped, as in Kafka.
func (p *pass) mapBatch(h segment.BatchHeader, b []byte) (bool, error) {
	p.stats.MapBytesRead += int64(len(b))
	if h.IsControl() {
		return false, nil
	}
	recs, err := p.w.dec.Decode(b, p.w.recs[:0])
	p.w.recs = recs
	if err != nil {
		return false, fmt.Errorf("%w: %s: batch at offset %d: %w", ErrCorruptSegment, p.c.log.Dir(), h.BaseOffset, err)
	}
	for i := range recs {
		r := &recs[i]
		if r.Offset < p.c.firstDirty || r.Key == nil {
			continue
		}
		p.stats.MapRecordsRead++
		if !p.w.m.Put(r.Key, r.Offset) {
			p.latest = r.Offset - 1
			p.stats.MapFull = true
			return true, nil
		}
	}
	return false, nil
}
