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

	// Idempotent-producer errors (producer_state.go). A batch that fails
	// these checks rejects the whole append and nothing is written.

	// ErrInvalidProducerEpoch: a batch's producer epoch is older than the
	// producer's current epoch: a newer instance fenced it (Kafka's
	// INVALID_PRODUCER_EPOCH).
	ErrInvalidProducerEpoch = errors.New("invalid producer epoch")
	// ErrOutOfOrderSequence: a batch's sequence does not continue the
	// producer's last one (or a new epoch does not start at 0) (Kafka's
	// OUT_OF_ORDER_SEQUENCE_NUMBER).
	ErrOutOfOrderSequence = errors.New("out of order sequence number")
	// ErrInvalidTxnState: a non-transactional batch from a producer whose
	// transaction is open (Kafka's INVALID_TXN_STATE).
	ErrInvalidTxnState = errors.New("invalid transaction state")
	// ErrTransactionCoordinatorFenced: a transaction marker carries a
	// coordinator epoch older than the one of the last marker for its
	// producer (Kafka's TRANSACTION_COORDINATOR_FENCED).
	ErrTransactionCoordinatorFenced = errors.New("transaction coordinator fenced")
	// ErrCorruptSnapshot: a producer-state snapshot file failed its
	// version, length or CRC check; Open ignores and deletes such a file.
	ErrCorruptSnapshot = errors.New("corrupt producer state snapshot")
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
