package segment

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
	"sync"
	"time"

	"github.com/varve/varve/record"
)

// Transactions in the log (KIP-98), as Kafka's ProducerStateManager and
// UnifiedLog keep them:
//
//   - A producer's transaction opens at its first transactional batch
//     and ends at a control batch, the COMMIT or ABORT marker its
//     transaction coordinator writes through AppendTxnMarker. Until then
//     it is ongoing (producer_state.go records its first offset, and the
//     producer snapshots keep it across restarts).
//   - The first unstable offset is the first offset of the earliest
//     ongoing transaction, or of the earliest ended one whose marker is
//     not yet below the high watermark (Kafka's unreplicatedTxns: until
//     the marker is replicated, a new leader may not have it). The last
//     stable offset (LSO) is that offset capped by the high watermark; a
//     read_committed consumer reads nothing at or past it.
//   - An ABORT marker adds an entry to the transaction index of the
//     segment that holds it (txnindex.go), with the LSO once the marker
//     is written, so that read_committed fetches can return the aborted
//     transactions of the range they read.

// Control record types of Kafka's ControlRecordType, in a marker's key.
const (
	controlTypeAbort  = 0
	controlTypeCommit = 1
)

// endTxnMarker is a decoded control record (Kafka's EndTransactionMarker).
type endTxnMarker struct {
	coordinatorEpoch int32 // -1 if unreadable
	abort            bool
}

// decodeEndTxnMarker reads the one record of a control batch: key =
// version i16, type i16; value = version i16, coordinatorEpoch i32.
func decodeEndTxnMarker(batch []byte) endTxnMarker {
	m := endTxnMarker{coordinatorEpoch: -1}
	if len(batch) <= record.BatchHeaderSize {
		return m
	}
	recs, err := record.DecodeBatch(batch, nil)
	if err != nil || len(recs) == 0 {
		return m
	}
	if k := recs[0].Key; len(k) >= 4 {
		m.abort = int16(binary.BigEndian.Uint16(k[2:])) == controlTypeAbort
	}
	if v := recs[0].Value; len(v) >= 6 {
		m.coordinatorEpoch = int32(binary.BigEndian.Uint32(v[2:]))
	}
	return m
}

// TxnMarker is what a transaction coordinator asks a partition leader to
// write at the end of a transaction (one entry of WriteTxnMarkers).
type TxnMarker struct {
	ProducerID       int64
	ProducerEpoch    int16
	CoordinatorEpoch int32
	Commit           bool  // COMMIT, else ABORT
	Timestamp        int64 // ms since the epoch; 0 means now
}

// BuildTxnMarker encodes m as Kafka's control batch: attributes
// transactional and control, the producer id and epoch, no sequence, and
// one record whose key is (version 0, type) and value (version 0,
// coordinator epoch).
func BuildTxnMarker(m TxnMarker) ([]byte, error) {
	typ := int16(controlTypeAbort)
	if m.Commit {
		typ = controlTypeCommit
	}
	key := binary.BigEndian.AppendUint16(make([]byte, 2, 4), uint16(typ))
	value := binary.BigEndian.AppendUint32(make([]byte, 2, 6), uint32(m.CoordinatorEpoch))
	ts := m.Timestamp
	if ts == 0 {
		ts = time.Now().UnixMilli()
	}
	b := record.NewBatchBuilder(record.CompressionNone)
	b.SetProducer(m.ProducerID, m.ProducerEpoch, record.NoSequence)
	b.SetTransactional(true)
	b.Append(record.Record{Key: key, Value: value, Timestamp: ts})
	batch, err := b.Build()
	if err != nil {
		return nil, err
	}
	attrs := binary.BigEndian.Uint16(batch[record.AttributesPos:]) | record.AttrControl
	binary.BigEndian.PutUint16(batch[record.AttributesPos:], attrs)
	binary.BigEndian.PutUint32(batch[record.CRCPos:], crc32.Checksum(batch[record.AttributesPos:], castagnoli))
	return batch, nil
}

// AppendTxnMarker writes a transaction marker as the partition leader
// (Kafka's appendAsLeader with AppendOrigin.COORDINATOR), stamped with
// leaderEpoch. It ends the producer's transaction: the last stable
// offset moves past it and, for an ABORT, the transaction index gains an
// entry. A marker with an epoch older than the producer's is refused
// (ErrInvalidProducerEpoch), as is one with a coordinator epoch older
// than the last marker's (ErrTransactionCoordinatorFenced).
func (l *Log) AppendTxnMarker(m TxnMarker, leaderEpoch int32) (AppendInfo, error) {
	b, err := BuildTxnMarker(m)
	if err != nil {
		return AppendInfo{}, err
	}
	return l.AppendAsCoordinator(b, leaderEpoch)
}

// AppendAsCoordinator is AppendWithEpoch for control batches built by
// BuildTxnMarker: they get offsets and the leader epoch, and the producer
// checks of a marker instead of a producer's.
func (l *Log) AppendAsCoordinator(b []byte, leaderEpoch int32) (AppendInfo, error) {
	for p := 0; p < len(b); {
		h, err := record.ParseHeader(b[p:])
		if err != nil || !h.IsControl() || h.ProducerID < 0 || h.Size() < record.BatchHeaderSize {
			return AppendInfo{}, fmt.Errorf("%s: %w: a coordinator appends transaction markers only", l.dir, record.ErrInvalidRecord)
		}
		p += int(h.Size())
	}
	return l.appendLeader(b, true, leaderEpoch, originCoordinator)
}

// openTxn is an ongoing transaction: its producer and first offset.
type openTxn struct{ pid, first int64 }

// completedTxn is Kafka's CompletedTxn: a transaction a marker ended.
type completedTxn struct {
	pid, first, last int64 // last: the marker's offset
	aborted          bool
}

// txnTracker is the part of the producer state that knows which
// transactions are ongoing, ordered by first offset (Kafka's ongoingTxns),
// and the transactions the append being analysed begins and ends.
// REQUIRES the log's writer lock.
type txnTracker struct {
	ongoing   []openTxn // sorted by first offset
	started   []openTxn
	completed []completedTxn // in marker order
	// onDone is told of each ended transaction with the last stable
	// offset once its marker is written, before it leaves ongoing.
	onDone func(c completedTxn, lso int64) error
}

func (m *producerStateManager) resetPending() {
	m.pending = m.pending[:0]
	m.txns.started = m.txns.started[:0]
	m.txns.completed = m.txns.completed[:0]
}

// trackTxnEvent notes the transaction a batch of producer h.ProducerID at
// offset first began or ended; before and after are the producer's open
// transaction's first offset around the batch.
func (m *producerStateManager) trackTxnEvent(h record.BatchHeader, first, before, after int64, marker endTxnMarker) {
	t := &m.txns
	if h.IsControl() {
		if h.RecordCount == 0 {
			return // emptied by compaction: ends nothing
		}
		if before < 0 {
			before = first // Kafka: a marker without an open transaction spans itself
		}
		t.completed = append(t.completed, completedTxn{pid: h.ProducerID, first: before, last: first, aborted: marker.abort})
		return
	}
	if before < 0 && after >= 0 {
		t.started = append(t.started, openTxn{pid: h.ProducerID, first: after})
	}
}

// commitTxnEvents applies the staged begin and end events.
func (m *producerStateManager) commitTxnEvents() error {
	t := &m.txns
	for _, o := range t.started {
		t.insert(o)
	}
	var err error
	for _, c := range t.completed {
		lso := c.last + 1
		for _, o := range t.ongoing { // Kafka's lastStableOffset(completedTxn)
			if o.pid != c.pid {
				lso = o.first
				break
			}
		}
		if t.onDone != nil && err == nil {
			err = t.onDone(c, lso)
		}
		t.remove(openTxn{pid: c.pid, first: c.first})
	}
	t.started, t.completed = t.started[:0], t.completed[:0]
	return err
}

func (t *txnTracker) insert(o openTxn) {
	i, _ := slices.BinarySearchFunc(t.ongoing, o, compareOpenTxn)
	t.ongoing = slices.Insert(t.ongoing, i, o)
}

func (t *txnTracker) remove(o openTxn) {
	if i, ok := slices.BinarySearchFunc(t.ongoing, o, compareOpenTxn); ok {
		t.ongoing = slices.Delete(t.ongoing, i, i+1)
	}
}

func compareOpenTxn(a, b openTxn) int {
	return cmp.Or(cmp.Compare(a.first, b.first), cmp.Compare(a.pid, b.pid))
}

// firstOngoing is the first offset of the earliest ongoing transaction,
// -1 when none is.
func (t *txnTracker) firstOngoing() int64 {
	if len(t.ongoing) == 0 {
		return -1
	}
	return t.ongoing[0].first
}

// resetOngoing derives the ongoing transactions from the producers'
// state, after a load or a clear.
func (m *producerStateManager) resetOngoing() {
	t := &m.txns
	t.ongoing = t.ongoing[:0]
	for _, e := range m.producers {
		if e.txnFirstOffset >= 0 {
			t.ongoing = append(t.ongoing, openTxn{pid: e.producerID, first: e.txnFirstOffset})
		}
	}
	slices.SortFunc(t.ongoing, compareOpenTxn)
}

// lsoState is what LastStableOffset reads without the writer lock.
type lsoState struct {
	mu sync.Mutex
	// firstOngoing mirrors txnTracker.firstOngoing after each change.
	firstOngoing int64
	// unreplicated are ended transactions whose marker may not be below
	// the high watermark yet, by first offset (Kafka's unreplicatedTxns).
	unreplicated []completedTxn
}

// txnDone is the producer state's onDone: the ABORT's index entry goes
// to the segment holding the marker, and the transaction stays unstable
// until its marker is below the high watermark. REQUIRES mu.
func (l *Log) txnDone(c completedTxn, lso int64) error {
	if c.aborted {
		segs := l.segments()
		s := segs[floorSegment(segs, c.last)]
		a := AbortedTxn{ProducerID: c.pid, FirstOffset: c.first, LastOffset: c.last, LastStableOffset: lso}
		if err := s.appendAbortedTxn(a); err != nil {
			return err
		}
	}
	l.lso.mu.Lock()
	defer l.lso.mu.Unlock()
	u := l.lso.unreplicated
	i, _ := slices.BinarySearchFunc(u, c.first, func(x completedTxn, first int64) int { return cmp.Compare(x.first, first) })
	l.lso.unreplicated = slices.Insert(u, i, c)
	return nil
}

// publishTxnState makes the ongoing transactions' first offset visible
// to LastStableOffset. REQUIRES mu.
func (l *Log) publishTxnState() {
	l.lso.mu.Lock()
	l.lso.firstOngoing = l.producers.txns.firstOngoing()
	l.lso.mu.Unlock()
}

// forgetUnreplicated drops the ended transactions kept for the LSO, as
// Kafka's truncateAndReload does. REQUIRES mu.
func (l *Log) forgetUnreplicated() {
	l.lso.mu.Lock()
	l.lso.unreplicated = nil
	l.lso.mu.Unlock()
}

// LastStableOffset is the offset a read_committed consumer reads up to
// (Kafka's UnifiedLog.lastStableOffset): the first unstable offset
// capped by highWatermark, the high watermark when no transaction is
// unstable. Ended transactions whose marker is below highWatermark stop
// counting as unstable (Kafka's onHighWatermarkUpdated) and are
// forgotten, so a caller must never pass more than the partition's high
// watermark. A log without replication passes its log end offset. Safe
// for concurrent use.
func (l *Log) LastStableOffset(highWatermark int64) int64 {
	lso := min(highWatermark, l.end.Load())
	l.lso.mu.Lock()
	defer l.lso.mu.Unlock()
	u := l.lso.unreplicated
	n := 0
	for n < len(u) && u[n].last < highWatermark {
		n++
	}
	if n > 0 {
		l.lso.unreplicated = slices.Delete(u, 0, n)
	}
	if len(l.lso.unreplicated) > 0 {
		lso = min(lso, l.lso.unreplicated[0].first)
	}
	if f := l.lso.firstOngoing; f >= 0 {
		lso = min(lso, f)
	}
	return lso
}

// OngoingTransactions returns the first offsets of the transactions
// open in the log, oldest first, with their producers.
func (l *Log) OngoingTransactions() []ProducerState {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]ProducerState, 0, len(l.producers.txns.ongoing))
	for _, o := range l.producers.txns.ongoing {
		if e := l.producers.producers[o.pid]; e != nil {
			out = append(out, e.export())
		}
	}
	return out
}
