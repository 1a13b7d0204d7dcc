package segment

import (
	"errors"
	"fmt"
)

// Errors returned by Log operations. Test for them with errors.Is; the
// returned errors wrap them with the log's directory and the offsets
// involved.
var (
	// ErrOffsetOutOfRange: the offset is below the log start offset or
	// above the log end offset (Kafka's OFFSET_OUT_OF_RANGE).
	ErrOffsetOutOfRange = errors.New("offset out of range")
	// ErrNonContiguous: a follower append does not continue at the log
	// end offset, or its batches' offsets do not increase.
	ErrNonContiguous = errors.New("batch offsets do not continue the log")
	// ErrLogFailed: an earlier write or fsync failed, so the log may have a
	// hole and refuses further appends until it is reopened (recovery
	// then truncates it to a valid prefix).
	ErrLogFailed = errors.New("log failed after an I/O error")
	// ErrClosed: the log was closed.
	ErrClosed = errors.New("log closed")
	// ErrInvalidConfig: a configuration value is out of range.
	ErrInvalidConfig = errors.New("invalid log configuration")
	// ErrRecordBatchTooLarge: a batch is larger than max.message.bytes or
	// segment.bytes (Kafka's RECORD_BATCH_TOO_LARGE / MESSAGE_TOO_LARGE).
	ErrRecordBatchTooLarge = errors.New("record batch too large")
	// ErrCorruptLog: recovery found bytes that are not a valid batch.
	ErrCorruptLog = errors.New("corrupt log")
)

// IOError says which file operation failed, where.
type IOError struct {
	Op   string // "append", "fsync", "truncate", "rename", ...
	Path string
	Err  error
}

func (e *IOError) Error() string { return fmt.Sprintf("%s %s: %v", e.Op, e.Path, e.Err) }
func (e *IOError) Unwrap() error { return e.Err }

func ioErr(op, path string, err error) error {
	if err == nil {
		return nil
	}
	return &IOError{Op: op, Path: path, Err: err}
}
