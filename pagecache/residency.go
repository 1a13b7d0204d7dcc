package pagecache

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// residencyWindow bounds one temporary mapping made by Residency, so a
// multi-GiB file needs neither a multi-GiB mapping nor a huge mincore vector.
const residencyWindow = 256 << 20

// Residency reports how many pages of f's byte range [off, off+n) are in the
// OS page cache, and how many pages the range covers. The range is clamped
// to the file's current size and widened to page boundaries, so a one-byte
// range counts as one page. It maps the range read-only for the duration of
// the call and asks mincore(2); the mapping never touches the pages, so the
// measurement does not change what it measures.
func Residency(f *os.File, off, n int64) (resident, total int64, err error) {
	size, err := fileSize(f)
	if err != nil {
		return 0, 0, fmt.Errorf("pagecache: residency: %w", err)
	}
	off = max(off, 0)
	end := min(off+max(n, 0), size)
	if off >= end {
		return 0, 0, nil
	}
	page := int64(os.Getpagesize())
	start := off &^ (page - 1)
	for w := start; w < end; w += residencyWindow {
		r, t, err := residencyWindowAt(f, w, min(end-w, residencyWindow), page)
		resident += r
		total += t
		if err != nil {
			return resident, total, fmt.Errorf("pagecache: residency %s [%d,+%d): %w", f.Name(), w, end-w, err)
		}
	}
	return resident, total, nil
}

// residencyWindowAt counts resident pages of one page-aligned window.
func residencyWindowAt(f *os.File, off, n, page int64) (resident, total int64, err error) {
	var data []byte
	if err := withFd(f, func(fd int) error {
		var e error
		data, e = unix.Mmap(fd, off, int(n), unix.PROT_READ, unix.MAP_SHARED)
		return e
	}); err != nil {
		return 0, 0, fmt.Errorf("mmap: %w", err)
	}
	defer func() {
		if e := unix.Munmap(data); e != nil && err == nil {
			err = fmt.Errorf("munmap: %w", e)
		}
	}()
	vec := make([]byte, (n+page-1)/page)
	if err := mincore(data, vec); err != nil {
		return 0, 0, fmt.Errorf("mincore: %w", err)
	}
	for _, v := range vec {
		resident += int64(v & 1)
	}
	return resident, int64(len(vec)), nil
}

// mincore wraps mincore(2), which golang.org/x/sys/unix does not expose.
func mincore(b []byte, vec []byte) error {
	_, _, e := unix.Syscall(unix.SYS_MINCORE,
		uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)),
		uintptr(unsafe.Pointer(unsafe.SliceData(vec))))
	if e != 0 {
		return e
	}
	return nil
}

// withFd runs fn with f's descriptor, holding the runtime's reference on it
// so a concurrent Close cannot recycle the number during fn.
func withFd(f *os.File, fn func(fd int) error) error {
	if f == nil {
		return ErrNoFile
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return closedError(err)
	}
	return ferr
}

func fileSize(f *os.File) (int64, error) {
	if f == nil {
		return 0, ErrNoFile
	}
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}
