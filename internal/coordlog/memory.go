package coordlog

import (
	"sync"

	"github.com/varve/varve/record"
)

// MemoryLog is an in-memory coordinator log for tests: it keeps the
// batches appended, in order, and can fail on demand.
type MemoryLog struct {
	mu      sync.Mutex
	batches [][]byte
	// Fail, when non-nil, is returned by Append instead of appending.
	Fail error
}

// Append keeps a copy of batch, one v2 batch, or returns Fail.
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
// assigned as a log would, ready for a coordinator's Load.
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
