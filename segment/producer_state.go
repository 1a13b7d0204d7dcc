package segment

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/varve/varve/record"
)

// Idempotent-producer state: Kafka's ProducerStateManager,
// ProducerStateEntry and ProducerAppendInfo (KIP-98), without the
// transaction index. For every producer id the log remembers the epoch
// and the metadata of the producer's last NumBatchesToRetain batches, so
// that a leader append can
//
//   - answer a retry of one of those batches with the original offsets
//     and write nothing (a duplicate);
//   - refuse a batch from an older epoch (ErrInvalidProducerEpoch);
//   - refuse a batch whose sequence does not continue the producer's
//     (ErrOutOfOrderSequence): a new epoch starts at 0, the same epoch at
//     lastSequence+1, wrapping from math.MaxInt32 to 0.
//
// A producer the log does not know (never seen, expired, or its state
// lost when its segments were deleted) may start at any sequence: since
// KIP-360 (Kafka 2.5) the leader no longer answers UNKNOWN_PRODUCER_ID
// for it, and Kafka 3.x/4.x accept such a batch
// (ProducerAppendInfo.checkSequence). Follower appends and the rebuild at
// Open apply batches without checks, as Kafka's AppendOrigin.REPLICATION.
//
// All of it is guarded by the log's writer lock (Log.mu).

// NumBatchesToRetain is how many of a producer's last batches the log
// remembers to recognise retries (Kafka's
// ProducerStateEntry.NUM_BATCHES_TO_RETAIN; it matches the producer's
// max.in.flight.requests.per.connection <= 5).
const NumBatchesToRetain = 5

// producerIDExpirationCheckInterval is Kafka's default
// producer.id.expiration.check.interval.ms.
const producerIDExpirationCheckInterval = 10 * time.Minute

// appendOrigin says how much checking a batch gets (Kafka's AppendOrigin).
type appendOrigin int8

const (
	originClient      appendOrigin = iota // a producer's batch: epoch and sequence are checked
	originReplication                     // a follower's or the log's own batch: applied as it is
	originCoordinator                     // a transaction marker from the coordinator: epochs are checked
)

// ProducerState is what the log remembers of one idempotent producer.
type ProducerState struct {
	ProducerID            int64
	Epoch                 int16
	LastSequence          int32 // -1 when no batch is remembered
	LastOffset            int64 // last offset of the producer's last batch, -1 when none
	LastTimestamp         int64 // max timestamp of its last batch; expiry counts from it
	CoordinatorEpoch      int32 // from the last transaction marker, -1 if none
	CurrentTxnFirstOffset int64 // first offset of its open transaction, -1 if none
	// Batches are the remembered batches, oldest first: at most
	// NumBatchesToRetain, and only the last one after a load from a
	// snapshot (which, as Kafka's, stores one batch per producer).
	Batches []ProducerBatch
}

// ProducerBatch is the metadata of one remembered batch.
type ProducerBatch struct {
	FirstSequence, LastSequence int32
	FirstOffset, LastOffset     int64
	MaxTimestamp                int64
}

// batchMetadata is Kafka's BatchMetadata: one batch of a producer.
type batchMetadata struct {
	lastSeq     int32
	offsetDelta int32 // lastOffset - firstOffset
	lastOffset  int64
	timestamp   int64
}

func (b batchMetadata) firstSeq() int32    { return decrementSequence(b.lastSeq, b.offsetDelta) }
func (b batchMetadata) firstOffset() int64 { return b.lastOffset - int64(b.offsetDelta) }

// producerEntry is Kafka's ProducerStateEntry. It is a value type: an
// append works on a copy and commits it only once the write succeeded.
type producerEntry struct {
	producerID       int64
	epoch            int16
	coordinatorEpoch int32
	lastTimestamp    int64
	txnFirstOffset   int64                             // -1: no open transaction
	batches          [NumBatchesToRetain]batchMetadata // oldest first
	n                int                               // batches in use
}

// emptyEntry is Kafka's ProducerStateEntry.empty: an unknown producer.
func emptyEntry(pid int64) producerEntry {
	return producerEntry{producerID: pid, epoch: record.NoProducerEpoch, coordinatorEpoch: -1,
		lastTimestamp: record.NoTimestamp, txnFirstOffset: -1}
}

func (e *producerEntry) isEmpty() bool { return e.n == 0 }

func (e *producerEntry) lastSeq() int32 {
	if e.n == 0 {
		return record.NoSequence
	}
	return e.batches[e.n-1].lastSeq
}

// lastDataOffset is the last offset of the last batch, -1 if none.
func (e *producerEntry) lastDataOffset() int64 {
	if e.n == 0 {
		return -1
	}
	return e.batches[e.n-1].lastOffset
}

func (e *producerEntry) lastOffsetDelta() int32 {
	if e.n == 0 {
		return 0
	}
	return e.batches[e.n-1].offsetDelta
}

// maybeUpdateEpoch moves to a new epoch, forgetting the old epoch's batches.
func (e *producerEntry) maybeUpdateEpoch(epoch int16) {
	if e.epoch != epoch {
		e.n = 0
		e.epoch = epoch
	}
}

// addBatchMetadata remembers b, dropping the oldest batch when full.
func (e *producerEntry) addBatchMetadata(b batchMetadata) {
	if e.n == NumBatchesToRetain {
		copy(e.batches[:], e.batches[1:])
		e.n--
	}
	e.batches[e.n] = b
	e.n++
}

func (e *producerEntry) addBatch(epoch int16, lastSeq int32, lastOffset int64, offsetDelta int32, ts int64) {
	e.maybeUpdateEpoch(epoch)
	e.addBatchMetadata(batchMetadata{lastSeq: lastSeq, offsetDelta: offsetDelta, lastOffset: lastOffset, timestamp: ts})
	e.lastTimestamp = ts
}

// update merges what one append learnt (Kafka's ProducerStateEntry.update).
func (e *producerEntry) update(next *producerEntry) {
	e.maybeUpdateEpoch(next.epoch)
	for _, b := range next.batches[:next.n] {
		e.addBatchMetadata(b)
	}
	e.coordinatorEpoch = next.coordinatorEpoch
	e.txnFirstOffset = next.txnFirstOffset
	e.lastTimestamp = next.lastTimestamp
}

// findDuplicate returns the remembered batch with h's epoch and exact
// sequence range, if any (Kafka's findDuplicateBatch).
func (e *producerEntry) findDuplicate(h record.BatchHeader) (batchMetadata, bool) {
	if h.ProducerEpoch != e.epoch {
		return batchMetadata{}, false
	}
	first, last := h.BaseSequence, lastSequence(h)
	for _, b := range e.batches[:e.n] {
		if b.firstSeq() == first && b.lastSeq == last {
			return b, true
		}
	}
	return batchMetadata{}, false
}

// expired is Kafka's isProducerExpired: no open transaction and the last
// batch's timestamp at least expirationMs before nowMs.
func (e *producerEntry) expired(nowMs, expirationMs int64) bool {
	return e.txnFirstOffset < 0 && nowMs-e.lastTimestamp >= expirationMs
}

func (e *producerEntry) export() ProducerState {
	ps := ProducerState{
		ProducerID: e.producerID, Epoch: e.epoch, LastSequence: e.lastSeq(), LastOffset: e.lastDataOffset(),
		LastTimestamp: e.lastTimestamp, CoordinatorEpoch: e.coordinatorEpoch, CurrentTxnFirstOffset: e.txnFirstOffset,
	}
	for _, b := range e.batches[:e.n] {
		ps.Batches = append(ps.Batches, ProducerBatch{FirstSequence: b.firstSeq(), LastSequence: b.lastSeq,
			FirstOffset: b.firstOffset(), LastOffset: b.lastOffset, MaxTimestamp: b.timestamp})
	}
	return ps
}

// Sequence arithmetic of Kafka's DefaultRecordBatch: sequences wrap from
// math.MaxInt32 to 0.

func incrementSequence(seq, inc int32) int32 {
	if seq > math.MaxInt32-inc {
		return inc - (math.MaxInt32 - seq) - 1
	}
	return seq + inc
}

func decrementSequence(seq, dec int32) int32 {
	if seq < dec {
		return math.MaxInt32 - (dec - seq) + 1
	}
	return seq - dec
}

// lastSequence is the sequence of h's last record, NoSequence if h has none.
func lastSequence(h record.BatchHeader) int32 {
	if h.BaseSequence == record.NoSequence {
		return record.NoSequence
	}
	return incrementSequence(h.BaseSequence, h.LastOffsetDelta)
}

// inSequence is Kafka's ProducerAppendInfo.inSequence.
func inSequence(lastSeq, nextSeq int32) bool {
	return int64(nextSeq) == int64(lastSeq)+1 || nextSeq == 0 && lastSeq == math.MaxInt32
}

// producerAppendInfo is Kafka's ProducerAppendInfo: one producer's
// batches within one append, checked against the state before it.
type producerAppendInfo struct {
	origin  appendOrigin
	current producerEntry // the producer's state before this append
	updated producerEntry // current's epoch and transaction, with this append's batches only
}

func newAppendInfo(current producerEntry, origin appendOrigin) producerAppendInfo {
	updated := current
	updated.n = 0
	return producerAppendInfo{origin: origin, current: current, updated: updated}
}

// appendBatch checks (for a client) and records one batch whose first
// offset is firstOffset. markerEpoch is the coordinator epoch of a
// transaction marker (control batch), -1 if unknown.
func (a *producerAppendInfo) appendBatch(h record.BatchHeader, firstOffset int64, markerEpoch int32) error {
	if h.IsControl() {
		if err := a.checkMarker(h, firstOffset, markerEpoch); err != nil {
			return err
		}
		a.appendEndTxnMarker(h, markerEpoch)
		return nil
	}
	if err := a.checkEpoch(h.ProducerEpoch, firstOffset); err != nil {
		return err
	}
	if a.origin == originClient {
		if err := a.checkSequence(h.ProducerEpoch, h.BaseSequence, firstOffset); err != nil {
			return err
		}
	}
	a.updated.addBatch(h.ProducerEpoch, lastSequence(h), firstOffset+int64(h.LastOffsetDelta), h.LastOffsetDelta, h.MaxTimestamp)
	return a.trackTxn(h, firstOffset)
}

// checkEpoch refuses an epoch older than the producer's (a fenced,
// "zombie" producer). Replicated batches are taken as they are.
func (a *producerAppendInfo) checkEpoch(epoch int16, offset int64) error {
	if epoch >= a.updated.epoch || a.origin != originClient {
		return nil
	}
	return fmt.Errorf("%w: producer %d at offset %d has epoch %d, older than the last seen epoch %d",
		ErrInvalidProducerEpoch, a.current.producerID, offset, epoch, a.updated.epoch)
}

// checkSequence is Kafka's ProducerAppendInfo.checkSequence (without the
// transaction-verification cases): a new epoch must start at 0 unless
// the producer is unknown; the same epoch must continue the last
// sequence, unless the producer is unknown (no epoch), in which case any
// sequence is accepted.
func (a *producerAppendInfo) checkSequence(epoch int16, firstSeq int32, offset int64) error {
	if epoch != a.updated.epoch {
		if firstSeq != 0 && a.updated.epoch != record.NoProducerEpoch {
			return fmt.Errorf("%w: producer %d at offset %d: new epoch %d must start at sequence 0, not %d (current epoch %d)",
				ErrOutOfOrderSequence, a.current.producerID, offset, epoch, firstSeq, a.updated.epoch)
		}
		return nil
	}
	lastSeq := int32(record.NoSequence)
	switch {
	case !a.updated.isEmpty():
		lastSeq = a.updated.lastSeq()
	case epoch == a.current.epoch:
		lastSeq = a.current.lastSeq()
	}
	if a.current.epoch == record.NoProducerEpoch || inSequence(lastSeq, firstSeq) {
		return nil
	}
	return fmt.Errorf("%w: producer %d at offset %d: sequence %d does not follow %d (epoch %d)",
		ErrOutOfOrderSequence, a.current.producerID, offset, firstSeq, lastSeq, epoch)
}

// trackTxn opens a transaction at the first transactional batch and, for
// a client, refuses a plain batch inside an open one.
func (a *producerAppendInfo) trackTxn(h record.BatchHeader, firstOffset int64) error {
	switch open := a.updated.txnFirstOffset >= 0; {
	case open && !h.IsTransactional() && a.origin == originClient:
		return fmt.Errorf("%w: producer %d sent a non-transactional batch at offset %d inside its transaction begun at %d",
			ErrInvalidTxnState, a.current.producerID, firstOffset, a.updated.txnFirstOffset)
	case !open && h.IsTransactional():
		a.updated.txnFirstOffset = firstOffset
	}
	return nil
}

// appendEndTxnMarker applies a COMMIT or ABORT marker. An empty control
// batch (its marker removed by compaction) changes nothing, as in Kafka.
func (a *producerAppendInfo) appendEndTxnMarker(h record.BatchHeader, coordinatorEpoch int32) {
	if h.RecordCount == 0 {
		return
	}
	a.updated.maybeUpdateEpoch(h.ProducerEpoch)
	if coordinatorEpoch >= 0 {
		a.updated.coordinatorEpoch = coordinatorEpoch
	}
	a.updated.txnFirstOffset = -1
	a.updated.lastTimestamp = h.MaxTimestamp
}

// checkMarker is the check of Kafka's appendEndTxnMarker for a marker
// from the coordinator: the producer epoch must not be older than the
// producer's, and the coordinator epoch not older than the last marker's
// (an older coordinator was fenced: TRANSACTION_COORDINATOR_FENCED).
// Replicated markers are taken as they are.
func (a *producerAppendInfo) checkMarker(h record.BatchHeader, offset int64, coordinatorEpoch int32) error {
	if a.origin == originReplication || h.RecordCount == 0 {
		return nil
	}
	if h.ProducerEpoch < a.updated.epoch {
		return fmt.Errorf("%w: marker for producer %d at offset %d has epoch %d, older than the last seen epoch %d",
			ErrInvalidProducerEpoch, a.current.producerID, offset, h.ProducerEpoch, a.updated.epoch)
	}
	if a.updated.coordinatorEpoch > coordinatorEpoch {
		return fmt.Errorf("%w: marker for producer %d at offset %d has coordinator epoch %d, older than %d",
			ErrTransactionCoordinatorFenced, a.current.producerID, offset, coordinatorEpoch, a.updated.coordinatorEpoch)
	}
	return nil
}

// checkClientBatch applies the producer checks of Kafka's LogValidator
// to a client batch: no control batches, and a producer id needs a
// sequence.
func checkClientBatch(h record.BatchHeader) error {
	if h.IsControl() {
		return invalidRecord(h, record.AttributesPos, "clients are not allowed to write control records")
	}
	if h.ProducerID >= 0 && h.BaseSequence < 0 {
		return invalidRecord(h, record.BaseSequencePos,
			"invalid sequence number %d in record batch with producer id %d", h.BaseSequence, h.ProducerID)
	}
	return nil
}

// producerStateManager is Kafka's ProducerStateManager, in memory. The
// snapshot files it is saved to and loaded from are producer_snapshot.go's.
// REQUIRES the log's writer lock for everything.
type producerStateManager struct {
	producers map[int64]*producerEntry
	// mapEnd is Kafka's lastMapOffset: the state reflects every batch
	// below this offset.
	mapEnd int64
	// lastSnap is Kafka's lastSnapOffset: the offset of the last snapshot
	// taken; a snapshot is written only when mapEnd has moved past it.
	lastSnap        int64
	lastExpiryCheck int64 // unix ms

	pending []producerAppendInfo // the append being analysed, at most one per producer

	txns txnTracker // ongoing transactions and the events of the pending append
}

func newProducerStateManager(now time.Time) *producerStateManager {
	return &producerStateManager{producers: map[int64]*producerEntry{}, lastExpiryCheck: now.UnixMilli()}
}

// commitProducers commits the producer state of a leader append that
// ended at next and publishes the transactions it began or ended. A
// failed transaction index write fails the log. REQUIRES mu.
func (l *Log) commitProducers(next int64) error {
	err := l.producers.commit(next)
	l.publishTxnState()
	if err != nil {
		return l.fail(err)
	}
	return nil
}

func (m *producerStateManager) isEmpty() bool { return len(m.producers) == 0 }

func (m *producerStateManager) clear() {
	clear(m.producers)
	m.resetOngoing()
}

// infoFor returns the pending append info of pid, creating it.
func (m *producerStateManager) infoFor(pid int64, origin appendOrigin) *producerAppendInfo {
	for i := range m.pending {
		if m.pending[i].current.producerID == pid {
			return &m.pending[i]
		}
	}
	current := emptyEntry(pid)
	if e := m.producers[pid]; e != nil {
		current = *e
	}
	m.pending = append(m.pending, newAppendInfo(current, origin))
	return &m.pending[len(m.pending)-1]
}

// analyze checks the batches of one append (concatenated and validated
// in b) and stages their producer updates for commit. For a client,
// next is the offset the first batch will get; a replicated batch
// carries its own. It returns the original of the first duplicate batch
// (Kafka answers the whole append with it and writes nothing) or the
// first error; either way nothing is staged.
func (m *producerStateManager) analyze(b []byte, next int64, origin appendOrigin) (dup batchMetadata, isDup bool, err error) {
	m.resetPending()
	for p := 0; p < len(b); {
		h, _ := record.ParseHeader(b[p:]) // b holds validated batches
		size := int(h.Size())
		first := h.BaseOffset
		if origin != originReplication {
			first, next = next, next+int64(h.LastOffsetDelta)+1
		}
		if origin == originClient {
			if err := checkClientBatch(h); err != nil {
				m.resetPending()
				return dup, false, err
			}
		}
		if dup, isDup, err = m.analyzeBatch(h, b[p:p+size], first, origin); err != nil || isDup {
			m.resetPending()
			return dup, isDup, err
		}
		p += size
	}
	return dup, false, nil
}

func (m *producerStateManager) analyzeBatch(h record.BatchHeader, batch []byte, first int64, origin appendOrigin) (batchMetadata, bool, error) {
	if h.ProducerID < 0 { // Kafka's hasProducerId: NO_PRODUCER_ID < producerId
		return batchMetadata{}, false, nil
	}
	if origin == originClient {
		if e := m.producers[h.ProducerID]; e != nil {
			if d, ok := e.findDuplicate(h); ok {
				return d, true, nil
			}
		}
	}
	marker := endTxnMarker{coordinatorEpoch: -1}
	if h.IsControl() {
		marker = decodeEndTxnMarker(batch)
	}
	info := m.infoFor(h.ProducerID, origin)
	before := info.updated.txnFirstOffset
	if err := info.appendBatch(h, first, marker.coordinatorEpoch); err != nil {
		return batchMetadata{}, false, err
	}
	m.trackTxnEvent(h, first, before, info.updated.txnFirstOffset, marker)
	return batchMetadata{}, false, nil
}

// commit applies the staged updates once the append is written; the
// state then reflects every offset below mapEnd. Transactions the append
// began join the ongoing ones; those it ended leave them, each reported
// to onTxnDone first (Kafka's completeTxn after updateTxnIndex).
func (m *producerStateManager) commit(mapEnd int64) error {
	for i := range m.pending {
		a := &m.pending[i]
		if e := m.producers[a.current.producerID]; e != nil {
			e.update(&a.updated)
		} else {
			entry := a.updated
			m.producers[entry.producerID] = &entry
		}
	}
	m.pending = m.pending[:0]
	m.mapEnd = mapEnd
	return m.commitTxnEvents()
}

// applyReplicated records one batch read back from the log or fetched
// from a leader, without checks. batch may hold the header only unless
// h is a control batch.
func (m *producerStateManager) applyReplicated(h record.BatchHeader, batch []byte) error {
	m.resetPending()
	if _, _, err := m.analyzeBatch(h, batch, h.BaseOffset, originReplication); err != nil {
		// Unreachable: replicated batches are not checked.
		m.resetPending()
		return nil
	}
	return m.commit(max(m.mapEnd, h.NextOffset()))
}

// applyReplicatedBatches records the batches of a follower append (b,
// whose batches carry their offsets) without checks; the state then
// reflects every offset below mapEnd.
func (m *producerStateManager) applyReplicatedBatches(b []byte, mapEnd int64) error {
	if _, _, err := m.analyze(b, mapEnd, originReplication); err != nil {
		return nil // unreachable: replicated batches are not checked
	}
	return m.commit(mapEnd)
}

// maybeExpire removes expired producers once per check interval (Kafka
// runs removeExpiredProducers on a timer; the log does it lazily, at the
// next append after the interval).
func (m *producerStateManager) maybeExpire(now time.Time, expiration time.Duration) {
	ms := now.UnixMilli()
	if ms-m.lastExpiryCheck < producerIDExpirationCheckInterval.Milliseconds() {
		return
	}
	m.lastExpiryCheck = ms
	m.removeExpired(ms, expiration.Milliseconds())
}

func (m *producerStateManager) removeExpired(nowMs, expirationMs int64) {
	for pid, e := range m.producers {
		if e.expired(nowMs, expirationMs) {
			delete(m.producers, pid)
		}
	}
}

// load puts the entries of a snapshot in place, dropping expired ones
// (Kafka's loadFromSnapshot).
func (m *producerStateManager) load(entries []producerEntry, nowMs, expirationMs int64) {
	for _, e := range entries {
		if !e.expired(nowMs, expirationMs) {
			entry := e
			m.producers[e.producerID] = &entry
		}
	}
	m.resetOngoing()
}

// sorted returns the entries ordered by producer id.
func (m *producerStateManager) sorted() []*producerEntry {
	out := make([]*producerEntry, 0, len(m.producers))
	for _, e := range m.producers {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b *producerEntry) int { return cmp.Compare(a.producerID, b.producerID) })
	return out
}

// checkProducers runs the producer checks of a leader append whose first
// batch will get offset next. done is true when the append must stop
// there: on an error, or on a duplicate, for which info then holds the
// original batch's offsets and timestamp and nothing is to be written.
// REQUIRES mu.
func (l *Log) checkProducers(b []byte, next int64, info AppendInfo, origin appendOrigin) (AppendInfo, bool, error) {
	l.producers.maybeExpire(l.cfg.Now(), l.cfg.ProducerIDExpiration)
	dup, isDup, err := l.producers.analyze(b, next, origin)
	if err != nil {
		return info, true, fmt.Errorf("%s: %w", l.dir, err)
	}
	if !isDup {
		return info, false, nil
	}
	return AppendInfo{FirstOffset: dup.firstOffset(), LastOffset: dup.lastOffset,
		MaxTimestamp: dup.timestamp, Duplicate: true}, true, nil
}

// ProducerState returns what the log remembers of producer pid, and
// whether it knows the producer at all.
func (l *Log) ProducerState(pid int64) (ProducerState, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.producers.producers[pid]
	if e == nil {
		return ProducerState{}, false
	}
	return e.export(), true
}

// Producers returns the state of every producer the log knows, ordered
// by producer id (what Kafka's DescribeProducers reports).
func (l *Log) Producers() []ProducerState {
	l.mu.Lock()
	defer l.mu.Unlock()
	entries := l.producers.sorted()
	out := make([]ProducerState, len(entries))
	for i, e := range entries {
		out[i] = e.export()
	}
	return out
}

// invalidRecord is Kafka's INVALID_RECORD for the batch h, at byte pos of
// the batch.
func invalidRecord(h record.BatchHeader, pos int64, format string, args ...any) error {
	return &record.CorruptBatchError{Offset: h.BaseOffset, Pos: pos, Err: record.ErrInvalidRecord,
		Reason: fmt.Sprintf(format, args...)}
}
