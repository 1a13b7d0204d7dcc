package pagecache

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sync"

	"golang.org/x/sys/unix"
)

// ErrReaderClosed is returned by an MmapReader used after Close.
var ErrReaderClosed = errors.New("pagecache: mmap reader closed")

// MmapReader maps a file read-only and serves reads from the mapping: the
// third read path next to sendfile Regions and the BlockCache. Writing to a
// socket copies from the mapping into the socket buffer in the kernel (one
// copy, no user-space buffer, but page-table work the sendfile path avoids).
//
// The mapping covers the file's size at NewMmapReader; later appends are not
// visible. If the file is truncated under the mapping, touching the lost
// pages raises SIGBUS; MmapReader turns that fault into an error wrapping
// ErrTruncated (and a write(2) from those pages fails with EFAULT), never a
// crash. It is safe for concurrent use; Close waits for reads in flight.
type MmapReader struct {
	name string
	mu   sync.RWMutex
	data []byte // nil after Close, or for an empty file
	size int64
	open bool // REQUIRES: mu held
}

// NewMmapReader maps f's current contents. The reader does not own f, which
// may be closed once NewMmapReader returns (the mapping keeps the file).
func NewMmapReader(f *os.File) (*MmapReader, error) {
	size, err := fileSize(f)
	if err != nil {
		return nil, fmt.Errorf("pagecache: mmap %s: %w", name(f), err)
	}
	m := &MmapReader{name: name(f), size: size, open: true}
	if size == 0 {
		return m, nil // mmap(2) refuses length 0
	}
	err = withFd(f, func(fd int) error {
		var e error
		m.data, e = unix.Mmap(fd, 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
		return e
	})
	if err != nil {
		return nil, fmt.Errorf("pagecache: mmap %s (%d bytes): %w", m.name, size, err)
	}
	return m, nil
}

// Len returns the number of mapped bytes.
func (m *MmapReader) Len() int64 { return m.size }

// Advise passes a hint for the mapping to madvise(2): Sequential, Random,
// WillNeed, DontNeed or Normal, with the same meaning as for Advise.
func (m *MmapReader) Advise(a Advice) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if !m.open {
		return ErrReaderClosed
	}
	if len(m.data) == 0 {
		return nil
	}
	if err := unix.Madvise(m.data, madvice(a)); err != nil {
		return fmt.Errorf("pagecache: madvise %s %s: %w", a, m.name, err)
	}
	return nil
}

func madvice(a Advice) int {
	switch a {
	case Sequential:
		return unix.MADV_SEQUENTIAL
	case Random:
		return unix.MADV_RANDOM
	case WillNeed:
		return unix.MADV_WILLNEED
	case DontNeed:
		return unix.MADV_DONTNEED
	}
	return unix.MADV_NORMAL
}

// ReadAt implements io.ReaderAt over the mapping.
func (m *MmapReader) ReadAt(p []byte, off int64) (n int, err error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if !m.open {
		return 0, ErrReaderClosed
	}
	if off < 0 {
		return 0, fmt.Errorf("pagecache: mmap read %s at %d: negative offset", m.name, off)
	}
	if off >= m.size {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	defer withFaults()()
	defer m.recoverFault(off, &err)
	n = copy(p, m.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// WriteRange writes the mapped bytes [off, off+n) to w with a single Write
// of a slice of the mapping. A range past the mapping writes what is mapped
// and returns an error wrapping ErrTruncated.
func (m *MmapReader) WriteRange(w io.Writer, off, n int64) (written int64, err error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if !m.open {
		return 0, ErrReaderClosed
	}
	if n <= 0 {
		return 0, nil
	}
	off = max(off, 0)
	end := min(off+n, m.size)
	defer withFaults()()
	defer m.recoverFault(off, &err)
	if off < end {
		k, werr := w.Write(m.data[off:end])
		written = int64(k)
		if werr != nil {
			return written, fmt.Errorf("pagecache: mmap write %s [%d,+%d): %w", m.name, off, end-off, werr)
		}
	}
	if off+n > m.size {
		return written, fmt.Errorf("pagecache: mmap write %s [%d,+%d) past %d: %w", m.name, off, n, m.size, ErrTruncated)
	}
	return written, nil
}

// WriteTo writes the whole mapping to w (io.WriterTo).
func (m *MmapReader) WriteTo(w io.Writer) (int64, error) { return m.WriteRange(w, 0, m.size) }

// Close unmaps the file after the reads in flight finish. Closing twice is a
// no-op.
func (m *MmapReader) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.open {
		return nil
	}
	m.open = false
	data := m.data
	m.data = nil
	if data == nil {
		return nil
	}
	if err := unix.Munmap(data); err != nil {
		return fmt.Errorf("pagecache: munmap %s: %w", m.name, err)
	}
	return nil
}

// recoverFault must be deferred before touching the mapping in user space.
// It arms the runtime so that a SIGBUS (the file shrank under the mapping)
// becomes a panic on this goroutine, and turns that panic into an error.
// Panics that are not memory faults are re-raised.
func (m *MmapReader) recoverFault(off int64, err *error) {
	r := recover()
	if r == nil {
		return
	}
	if re, ok := r.(interface{ Addr() uintptr }); ok {
		*err = fmt.Errorf("pagecache: mmap %s: fault at %#x reading from %d: %w", m.name, re.Addr(), off, ErrTruncated)
		return
	}
	panic(r)
}

// withFaults enables SetPanicOnFault on this goroutine and returns the
// function that restores the previous setting.
func withFaults() (restore func()) {
	old := debug.SetPanicOnFault(true)
	return func() { debug.SetPanicOnFault(old) }
}
