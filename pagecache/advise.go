package pagecache

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Advice is a posix_fadvise(2) hint about how a byte range will be read.
type Advice int

const (
	// Normal undoes earlier advice: default readahead.
	Normal Advice = unix.FADV_NORMAL
	// Sequential asks for aggressive readahead (Linux doubles the window);
	// the hint for a catch-up consumer reading a segment front to back.
	Sequential Advice = unix.FADV_SEQUENTIAL
	// Random disables readahead.
	Random Advice = unix.FADV_RANDOM
	// WillNeed starts asynchronous reads of the range into the page cache.
	WillNeed Advice = unix.FADV_WILLNEED
	// DontNeed drops the range's clean pages from the page cache. Dirty pages
	// stay until written back, so call DropCache to evict just-written data.
	DontNeed Advice = unix.FADV_DONTNEED
)

func (a Advice) String() string {
	switch a {
	case Normal:
		return "normal"
	case Sequential:
		return "sequential"
	case Random:
		return "random"
	case WillNeed:
		return "willneed"
	case DontNeed:
		return "dontneed"
	}
	return fmt.Sprintf("Advice(%d)", int(a))
}

// Advise gives the kernel a hint about f's range [off, off+n); n == 0 means
// "to the end of the file", as in posix_fadvise(2).
func Advise(f *os.File, off, n int64, a Advice) error {
	err := withFd(f, func(fd int) error { return unix.Fadvise(fd, off, n, int(a)) })
	if err != nil {
		return fmt.Errorf("pagecache: fadvise %s %s [%d,+%d): %w", a, name(f), off, n, err)
	}
	return nil
}

// Readahead reads f's range [off, off+n) into the page cache with
// readahead(2), which returns once the reads are issued (it may block while
// it queues them) without copying anything to user space.
func Readahead(f *os.File, off, n int64) error {
	err := withFd(f, func(fd int) error { return readahead(fd, off, n) })
	if err != nil {
		return fmt.Errorf("pagecache: readahead %s [%d,+%d): %w", name(f), off, n, err)
	}
	return nil
}

// DropCache evicts f's range [off, off+n) from the page cache (n == 0: to
// the end of the file): it writes dirty pages back with fdatasync(2), then
// advises DontNeed. It is how a test or an experiment turns a tail read into
// a catch-up read. Pages mapped by some process stay resident.
func DropCache(f *os.File, off, n int64) error {
	if err := withFd(f, unix.Fdatasync); err != nil {
		return fmt.Errorf("pagecache: fdatasync %s: %w", name(f), err)
	}
	return Advise(f, off, n, DontNeed)
}

func name(f *os.File) string {
	if f == nil {
		return "<nil>"
	}
	return f.Name()
}
