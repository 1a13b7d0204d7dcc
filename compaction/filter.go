package compaction

import (
	"fmt"
	"math"

	"github.com/varve/varve/record"
)

// verdict is what the cleaner does with one record.
type verdict uint8

const (
	keep       verdict = iota
	superseded         // a later record has the same key
	keyless            // no key: invalid in a compacted log
	expired            // a tombstone past its batch's delete horizon
)

// decide is Kafka's Cleaner.shouldRetainRecord for a v2 batch: a record
// past the map's range is kept; a keyless record goes; a record whose key
// has a later offset in the map goes; a tombstone goes once its batch's
// delete horizon has passed (now >= horizon); everything else stays.
// h1 and h2 are the key's hashes.
func (p *pass) decide(h record.BatchHeader, r *keyRec, h1, h2 uint64) verdict {
	if r.offset > p.latest {
		return keep
	}
	if r.key == nil {
		return keyless
	}
	if off, ok := p.w.m.get(h1, h2); ok && r.offset < off {
		return superseded
	}
	if horizon, ok := h.DeleteHorizon(); r.tombstone && ok && p.nowMs >= horizon {
		return expired
	}
	return keep
}

// filter is Kafka's MemoryRecords.filterTo for one batch: it returns the
// bytes to write for it (the original bytes when nothing changes, a
// rebuilt batch otherwise) or nil to drop it. A rebuilt batch keeps its
// base and last offset, producer fields, codec and each kept record's
// offset and timestamp. A batch that keeps a tombstone and has no delete
// horizon gets one: now + delete.retention.ms. A batch emptied of records
// is kept as a bare header when it is the last data batch of its producer
// (Kafka's RETAIN_EMPTY, so producer state survives) or the last batch of
// the cleaning round, or, until the swap is done, when it is the last
// batch of the group (see emptied); otherwise it goes. lastOfGroup says
// which.
func (p *pass) filter(h record.BatchHeader, b []byte, lastOfGroup bool) ([]byte, error) {
	p.stats.BatchesRead++
	if h.IsControl() {
		return p.filterMarker(h, b, lastOfGroup)
	}
	if p.txns.onBatch(h) { // Kafka: aborted transactional data goes whole
		p.stats.AbortedBatchesDropped++
		return p.emptied(h, lastOfGroup)
	}
	keys, decoded, err := p.w.batchKeys(h, b)
	if err != nil {
		return nil, p.corrupt(h, err)
	}
	kept, tombstones := p.verdicts(h, keys)
	switch {
	case kept == 0:
		return p.emptied(h, lastOfGroup)
	case kept == len(keys) && (tombstones == 0 || h.HasDeleteHorizon()):
		return b, nil
	}
	if !decoded {
		if p.w.recs, err = p.w.dec.Decode(b, p.w.recs[:0]); err != nil {
			return nil, p.corrupt(h, err)
		}
	}
	return p.rebuild(h, tombstones)
}

func (p *pass) corrupt(h record.BatchHeader, err error) error {
	return fmt.Errorf("%w: %s: batch at offset %d: %w", ErrCorruptSegment, p.c.log.Dir(), h.BaseOffset, err)
}

// verdicts decides every record of the batch into the worker's verdicts
// and counts the kept records and the kept tombstones.
func (p *pass) verdicts(h record.BatchHeader, keys []keyRec) (kept, tombstones int) {
	hs := &p.w.hashes
	hs.hash(p.w.m, keys, math.MinInt64, p.latest)
	vs := p.w.verdicts[:0]
	for i := range keys {
		v := p.decide(h, &keys[i], hs.h1[i], hs.h2[i])
		p.count(v, keys[i].tombstone)
		vs = append(vs, v)
		if v == keep {
			kept++
			if keys[i].tombstone {
				tombstones++
			}
		}
	}
	p.w.verdicts = vs
	return kept, tombstones
}

// rebuild builds the batch from the decoded records in w.recs that the
// verdicts keep, giving it a delete horizon if it keeps tombstones and
// has none yet.
func (p *pass) rebuild(h record.BatchHeader, tombstones int) ([]byte, error) {
	kept := p.w.kept[:0]
	for i, v := range p.w.verdicts {
		if v == keep {
			kept = append(kept, p.w.recs[i])
		}
	}
	p.w.kept = kept
	if tombstones > 0 && !h.HasDeleteHorizon() {
		h.Attributes |= record.AttrDeleteHorizon
		h.BaseTimestamp = p.nowMs + p.topic.DeleteRetention.Milliseconds()
		p.stats.HorizonsSet++
	}
	out, err := record.AppendRebuiltBatch(p.w.scratch[:0], h, kept)
	p.w.scratch = out
	if err != nil {
		return nil, fmt.Errorf("%s: rebuild batch at offset %d: %w", p.c.log.Dir(), h.BaseOffset, err)
	}
	return out, nil
}

func (p *pass) count(v verdict, tombstone bool) {
	p.stats.RecordsRead++
	switch v {
	case keep:
		p.stats.RecordsKept++
		if tombstone {
			p.stats.TombstonesKept++
		}
	case superseded:
		p.stats.RecordsSuperseded++
	case keyless:
		p.stats.KeylessDropped++
	case expired:
		p.stats.TombstonesDropped++
	}
}

// emptied decides about a batch none of whose records stay. As Kafka
// 4.x's Cleaner.cleanInto, it keeps the batch (RETAIN_EMPTY) when it
// holds its producer's last sequence, or when it is the last batch of
// the cleaning round (its next offset is the first uncleanable offset,
// "so that last offset information is not lost"). A batch kept only
// because it ends the group sets p.rangeEnd: the swap removes it once
// the cleaned segments are live (segment.CleanedSegment's
// AppendRangeEnd), so that the log holds what Kafka's does.
func (p *pass) emptied(h record.BatchHeader, lastOfGroup bool) ([]byte, error) {
	retain := p.lastOfProducer(h) || h.NextOffset() == p.c.firstUncleanable
	if !lastOfGroup && !retain {
		return nil, nil
	}
	p.rangeEnd = !retain
	p.stats.EmptyBatchesKept++
	out, err := record.AppendRebuiltBatch(p.w.scratch[:0], h, nil)
	p.w.scratch = out
	if err != nil {
		return nil, fmt.Errorf("%s: empty batch at offset %d: %w", p.c.log.Dir(), h.BaseOffset, err)
	}
	return out, nil
}
