package group

import (
	"sync"

	"github.com/varve/varve/record"
)

// Log is where a coordinator writes its records: its partition of
// __consumer_offsets. Append takes one v2 batch (offsets unassigned) and
// returns once the batch is in the log under the partition's flush
// policy, or with the error that kept it out. It is called with the
// coordinator's caller holding whatever lock serialises the coordinator.
type Log interface {
	Append(batch []byte) error
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

// Len is the number of batches appended.
func (l *MemoryLog) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.batches)
}
