package index

import (
	"errors"
	"fmt"
)

var (
	// ErrIndexFull is returned by an append to an index with no free slot.
	// The caller must roll the segment (Kafka: "Attempt to append to a full
	// index").
	ErrIndexFull = errors.New("index is full")

	// ErrInvalidOffset is returned when an appended offset does not fit the
	// index: not above the last entry's offset (offset index), below it (time
	// index), or outside [baseOffset, baseOffset+MaxInt32] (Kafka's
	// InvalidOffsetException and IndexOffsetOverflowException).
	ErrInvalidOffset = errors.New("invalid index offset")

	// ErrInvalidPosition is returned when an appended log position is
	// negative, does not fit in 31 bits, or is not above the last entry's
	// position.
	ErrInvalidPosition = errors.New("invalid index position")

	// ErrInvalidTimestamp is returned when a time index append carries a
	// timestamp below the last entry's (Kafka throws IllegalStateException).
	ErrInvalidTimestamp = errors.New("invalid index timestamp")

	// ErrInvalidSize is returned when a max index size cannot hold one entry.
	ErrInvalidSize = errors.New("invalid max index size")

	// ErrClosed is returned by operations on a closed or deleted index.
	ErrClosed = errors.New("index is closed")

	// ErrCorruptIndex matches every *CorruptIndexError with errors.Is.
	ErrCorruptIndex = errors.New("corrupt index")
)

// CorruptIndexError reports an index file whose content cannot be trusted
// (Kafka's CorruptIndexException). The segment should rebuild the index from
// the log. errors.Is(err, ErrCorruptIndex) is true for it.
type CorruptIndexError struct {
	Path   string // the index file
	Reason string // what is wrong, naming the slot when one entry is at fault
}

// Error implements error.
func (e *CorruptIndexError) Error() string {
	return fmt.Sprintf("corrupt index %s: %s", e.Path, e.Reason)
}

// Is reports whether target is ErrCorruptIndex.
func (e *CorruptIndexError) Is(target error) bool {
	return target == ErrCorruptIndex
}
