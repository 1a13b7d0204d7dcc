package pagecache

import (
	"errors"
	"fmt"
)

// ErrTruncated reports that a region reaches past the current end of its file:
// the file shrank (or was never that long) after the region was cut. Kafka
// treats the same condition in FileRecords.writeTo as "truncated during write"
// and closes the connection; callers here should do the same, because the
// bytes already sent are a valid prefix but the response is incomplete.
var ErrTruncated = errors.New("pagecache: file shorter than region")

// ErrNoFile reports a non-empty region whose File is nil.
var ErrNoFile = errors.New("pagecache: region has no file")

// RegionError says which operation failed on which byte range of which file.
// It unwraps to the underlying cause (ErrTruncated, a syscall.Errno, os.ErrClosed, ...).
type RegionError struct {
	Op   string // "sendfile", "read", "copy", ...
	Name string // file name as given to os.Open
	Off  int64  // file position where the failing operation started
	Len  int64  // bytes the operation still had to move
	Err  error
}

func (e *RegionError) Error() string {
	return fmt.Sprintf("pagecache: %s %s [%d,+%d): %v", e.Op, e.Name, e.Off, e.Len, e.Err)
}

func (e *RegionError) Unwrap() error { return e.Err }
