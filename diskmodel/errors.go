package diskmodel

import (
	"errors"
	"fmt"
)

// ErrCorruptCache marks a cache file that exists but cannot be trusted: it
// does not parse, or it holds figures that are not positive and finite.
// LoadOrCalibrate treats it like a missing cache and overwrites it.
var ErrCorruptCache = errors.New("corrupt calibration cache")

// ErrUnsupported is returned by Calibrate on platforms where the package
// cannot measure (it needs Linux: fdatasync, O_DIRECT, fadvise).
var ErrUnsupported = errors.New("disk calibration is only implemented on Linux")

// ErrInvalid marks a Calibration whose figures are missing, negative or not
// finite, so its models would predict nonsense.
var ErrInvalid = errors.New("invalid calibration")

// Error says which step of a calibration or cache operation failed, on which
// path. It unwraps to the underlying error (a syscall errno, context.Canceled,
// ErrCorruptCache, ...).
type Error struct {
	Op   string // the step: "seq-write", "fsync-4k", "save", ...
	Path string // the file or directory involved
	Err  error
}

func (e *Error) Error() string {
	return fmt.Sprintf("diskmodel: %s %s: %v", e.Op, e.Path, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// wrap returns nil for a nil err, otherwise an *Error for op on path.
func wrap(op, path string, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Op: op, Path: path, Err: err}
}
