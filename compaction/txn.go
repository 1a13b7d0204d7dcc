package compaction

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

// Transactions in a compacted log, Kafka's LogCleaner rules (KIP-98):
//
//   - The cleanable range ends at the last stable offset (examine): data
//     of an ongoing transaction is never cleaned, nor is anything after it.
//   - The batches of an aborted transaction are removed whole, whatever
//     their keys, and never enter the offset map (an aborted record must
//     not supersede a committed one). The transactions come from the
//     log's transaction index (segment.Log.AbortedTransactions).
//   - A marker is kept while the group being cleaned still holds data of
//     its transaction; an ABORT kept so keeps its transaction index entry
//     in the cleaned segment. A marker whose transaction has no data left
//     gets a delete horizon (attribute bit 6, BaseTimestamp = now +
//     delete.retention.ms), as a tombstone does, and is removed by the
//     first cleaning after it ("transaction markers are retained until
//     delete.retention.ms after all data of the transaction is gone").
//     Unlike Kafka, a removable marker that is the last batch of its
//     group stays until a later pass (a group's last batch ends the swap
//     range, see segment.CleanedSegment.AppendRangeEnd, and must be data).
//
// txnState is Kafka's CleanedTransactionMetadata for one pass over one
// group of segments (or over the dirty section, for the offset map).
type txnState struct {
	pending []segment.AbortedTxn // not yet reached, by first offset
	added   map[[2]int64]bool    // (producer, marker offset) of those added
	// aborted are the producers whose aborted transaction has begun and
	// whose ABORT is still ahead; observed says a batch of it was read.
	aborted map[int64]*abortedTxn
	// committed are the producers with transactional data read that is
	// not aborted: their COMMIT is kept.
	committed map[int64]bool
}

type abortedTxn struct {
	txn      segment.AbortedTxn
	observed bool
}

func newTxnState() *txnState {
	return &txnState{added: map[[2]int64]bool{}, aborted: map[int64]*abortedTxn{}, committed: map[int64]bool{}}
}

// add queues the aborted transactions of a segment about to be read.
func (t *txnState) add(txns []segment.AbortedTxn) {
	for _, a := range txns {
		k := [2]int64{a.ProducerID, a.LastOffset}
		if !t.added[k] {
			t.added[k] = true
			t.pending = append(t.pending, a)
		}
	}
	slices.SortStableFunc(t.pending, func(a, b segment.AbortedTxn) int { return cmp.Compare(a.FirstOffset, b.FirstOffset) })
}

// consumeUpTo starts the aborted transactions that begin at or before
// offset.
func (t *txnState) consumeUpTo(offset int64) {
	n := 0
	for n < len(t.pending) && t.pending[n].FirstOffset <= offset {
		a := t.pending[n]
		if t.aborted[a.ProducerID] == nil {
			t.aborted[a.ProducerID] = &abortedTxn{txn: a}
		}
		n++
	}
	t.pending = t.pending[n:]
}

// onBatch is Kafka's onBatchRead for a data batch: it reports whether the
// batch belongs to an aborted transaction and must go.
func (t *txnState) onBatch(h record.BatchHeader) bool {
	t.consumeUpTo(h.LastOffset())
	if !h.IsTransactional() {
		return false
	}
	if a := t.aborted[h.ProducerID]; a != nil {
		a.observed = true
		return true
	}
	t.committed[h.ProducerID] = true
	return false
}

// onMarker is Kafka's onControlBatchRead: it reports whether the marker's
// transaction has no data left in what this pass read, so that the
// marker may go once its delete horizon passes, and, for an ABORT that
// stays, the transaction index entry the cleaned segment keeps.
func (t *txnState) onMarker(h record.BatchHeader, abort bool) (discardable bool, keepEntry *segment.AbortedTxn) {
	t.consumeUpTo(h.LastOffset())
	if h.RecordCount == 0 {
		return true, nil // emptied by an earlier cleaning
	}
	if abort {
		a := t.aborted[h.ProducerID]
		delete(t.aborted, h.ProducerID)
		if a != nil && a.observed {
			return false, &a.txn
		}
		return true, nil
	}
	had := t.committed[h.ProducerID]
	delete(t.committed, h.ProducerID)
	return !had, nil
}

// isAbortMarker reads a control batch's record key: version i16, type
// i16 (Kafka's ControlRecordType, 0 = ABORT).
func (w *worker) isAbortMarker(b []byte) (bool, error) {
	recs, err := w.dec.Decode(b, w.recs[:0])
	w.recs = recs
	if err != nil {
		return false, err
	}
	if len(recs) == 0 || len(recs[0].Key) < 4 {
		return false, errors.New("control record without a type")
	}
	return int16(binary.BigEndian.Uint16(recs[0].Key[2:])) == 0, nil
}

// filterMarker decides about a transaction marker: kept as it is while
// its transaction has data; given a delete horizon once it has none;
// removed (or emptied, when Kafka retains the batch) once that horizon
// passed. An ABORT kept for its data leaves its index entry in
// p.keepEntry for the cleaned segment that receives it.
func (p *pass) filterMarker(h record.BatchHeader, b []byte, lastOfGroup bool) ([]byte, error) {
	abort := false
	if h.RecordCount > 0 {
		var err error
		if abort, err = p.w.isAbortMarker(b); err != nil {
			return nil, p.corrupt(h, err)
		}
	}
	discardable, entry := p.txns.onMarker(h, abort)
	p.keepEntry = entry
	horizon, hasHorizon := h.DeleteHorizon()
	switch {
	case !discardable:
		return b, nil
	case h.RecordCount == 0 && !lastOfGroup: // Kafka: DELETE_EMPTY, unless retained
		return p.emptied(h, false)
	case hasHorizon && p.nowMs >= horizon && !lastOfGroup:
		p.stats.MarkersDropped++
		return p.emptied(h, false)
	case hasHorizon || h.RecordCount == 0:
		return b, nil
	}
	h.Attributes |= record.AttrDeleteHorizon
	h.BaseTimestamp = p.nowMs + p.topic.DeleteRetention.Milliseconds()
	p.stats.HorizonsSet++
	rebuilt, err := record.AppendRebuiltBatch(p.w.scratch[:0], h, p.w.recs)
	p.w.scratch = rebuilt
	if err != nil {
		return nil, fmt.Errorf("%s: marker at offset %d: %w", p.c.log.Dir(), h.BaseOffset, err)
	}
	return rebuilt, nil
}

// mapSkips is onBatch or onMarker for the offset map: it reports whether
// a batch is aborted data, which the map must not see.
func (p *pass) mapSkips(h record.BatchHeader, b []byte) (bool, error) {
	if !h.IsControl() {
		return p.mapTxns.onBatch(h), nil
	}
	abort := false
	if h.RecordCount > 0 {
		var err error
		if abort, err = p.w.isAbortMarker(b); err != nil {
			return false, err
		}
	}
	p.mapTxns.onMarker(h, abort)
	return true, nil
}
