package txn

import (
	"sync"

	"github.com/varve/varve/record"
)

// Log is where a coordinator writes its records: its partition of
// __transaction_state. Append takes one v2 batch (offsets unassigned)
// and returns once the batch is in the log, or with the error that
// kept it out.
type Log interface {
	Append(batch []byte) error
}

// ProducerIDs hands out producer ids never handed out before.
type ProducerIDs func() (int64, error)

// MarkerRequest asks for the markers that end one transaction to be
// written to each of its partitions (WriteTxnMarkers), with the
// coordinator epoch that lets a partition leader drop markers from a
// coordinator that has since been replaced.
type MarkerRequest struct {
	TransactionalID  string
	ProducerID       int64
	ProducerEpoch    int16
	Commit           bool
	CoordinatorEpoch int32
	Partitions       []TopicPartition
}

// Markers sends marker requests. Send must not block or call back into
// the coordinator: the caller writes the markers elsewhere, retrying
// until every partition has them (or the partition is gone), and then
// calls Coordinator.MarkersWritten.
type Markers interface {
	Send(MarkerRequest)
}

// MemoryLog is an in-memory Log for tests: it keeps the batches
// appended, in order, and can fail on demand.
type MemoryLog struct {
	mu      sync.Mutex
	batches [][]byte
	// Fail, when non-nil, is returned by Append instead of appending.
	Fail error
}

// Append implements Log.
func (l *MemoryLog) Append(batch []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.Fail != nil {
		return l.Fail
	}
	l.batches = append(l.batches, append([]byte(nil), batch...))
	return nil
}

// Bytes returns every batch appended, concatenated, with base offsets
// assigned as a log would, ready for Coordinator.Load.
func (l *MemoryLog) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []byte
	var next int64
	for _, b := range l.batches {
		start := len(out)
		out = append(out, b...)
		record.SetBaseOffset(out[start:], next)
		if h, err := record.ParseHeader(b); err == nil {
			next += int64(h.LastOffsetDelta) + 1
		}
	}
	return out
}
