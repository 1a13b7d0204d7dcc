package group

import "github.com/varve/varve/internal/coordlog"

// Log is where a coordinator writes its records: its partition of
// __consumer_offsets. Append takes one v2 batch (offsets unassigned) and
// returns once the batch is in the log under the partition's flush
// policy, or with the error that kept it out. It is called with the
// coordinator's caller holding whatever lock serialises the coordinator.
type Log interface {
	Append(batch []byte) error
}

// MemoryLog is an in-memory Log for tests: it keeps the batches
// appended, in order, can fail on demand (Fail), and replays them with
// the offsets a partition would give them (Bytes), ready for Load.
type MemoryLog = coordlog.MemoryLog
