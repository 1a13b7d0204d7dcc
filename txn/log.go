package txn

import "github.com/varve/varve/internal/coordlog"

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
// appended, in order, can fail on demand (Fail), and replays them with
// the offsets a partition would give them (Bytes), ready for Load.
type MemoryLog = coordlog.MemoryLog
