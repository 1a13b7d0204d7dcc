package compaction

import "errors"

// Errors of a cleaning pass. They are wrapped with the log's directory and
// the offsets or segment involved; test with errors.Is.
var (
	// ErrInvalidConfig: a configuration value is out of range.
	ErrInvalidConfig = errors.New("invalid cleaner configuration")
	// ErrCleaningInProgress: another pass is cleaning the same log.
	ErrCleaningInProgress = errors.New("log is being cleaned")
	// ErrSegmentsChanged: the log's segments changed under the pass
	// (retention or truncation removed or replaced one it was rewriting).
	// Nothing was swapped in; the next pass starts over.
	ErrSegmentsChanged = errors.New("log segments changed during cleaning")
	// ErrMapTooSmall: the dedupe buffer cannot hold even one key, so no
	// pass can make progress.
	ErrMapTooSmall = errors.New("offset map too small for any key")
	// ErrCorruptSegment: a segment holds bytes that are not whole, valid
	// batches.
	ErrCorruptSegment = errors.New("corrupt segment")
)
