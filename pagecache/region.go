package pagecache

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// maxSendfileChunk bounds one sendfile(2) call. The kernel caps a call at
// 0x7ffff000 bytes anyway; a smaller bound keeps each syscall (during which
// the runtime holds a reference on both fds) short, the same choice Go's net
// package makes for its own sendfile path.
const maxSendfileChunk = 4 << 20

// Region is a byte range of an open file that can reach a socket without
// passing through user space.
//
// A Region does not own File: closing the file is the caller's business, and
// a Region whose file was closed fails its operations with an error wrapping
// os.ErrClosed instead of touching a recycled descriptor. A Region is a value;
// only SendTo (pointer receiver) mutates it, to record progress.
type Region struct {
	File *os.File
	Off  int64 // position in File
	Len  int64 // bytes
}

// End returns the file position one past the region's last byte.
func (r Region) End() int64 { return r.Off + r.Len }

// Slice returns the sub-region [off, off+n) relative to r, clamped to r:
// off below 0 or above r.Len is clamped, and n is cut to what remains.
func (r Region) Slice(off, n int64) Region {
	off = min(max(off, 0), r.Len)
	n = min(max(n, 0), r.Len-off)
	return Region{File: r.File, Off: r.Off + off, Len: n}
}

// WriteTo writes the region to w and implements io.WriterTo with blocking
// semantics: it returns when every byte was written or an error occurred.
//
// When w exposes a file descriptor (syscall.Conn: *net.TCPConn,
// *net.UnixConn, *os.File) the bytes go through sendfile(2) and never enter
// user space; waiting for a full socket is left to the Go runtime's poller, so
// write deadlines set on w apply. Otherwise, or when the kernel refuses
// sendfile for this pair of descriptors before any byte moved, the bytes are
// copied through a pooled buffer with pread, which leaves the file's own
// offset untouched, so any number of Regions may share one *os.File.
//
// If the file ends before the region does, WriteTo returns the bytes that
// were written and an error wrapping ErrTruncated.
func (r Region) WriteTo(w io.Writer) (int64, error) {
	if r.Len <= 0 {
		return 0, nil
	}
	if r.File == nil {
		return 0, r.errorf("write", 0, ErrNoFile)
	}
	if sc, ok := w.(syscall.Conn); ok {
		n, handled, err := r.sendfileTo(sc)
		if handled {
			return n, err
		}
	}
	return r.copyTo(w)
}

// sendfileTo runs the sendfile loop on sc. handled is false when the pair of
// descriptors does not support sendfile and nothing was sent, so the caller
// may fall back to copying.
func (r Region) sendfileTo(sc syscall.Conn) (written int64, handled bool, err error) {
	dst, err := sc.SyscallConn()
	if err != nil {
		return 0, false, nil
	}
	src, err := r.File.SyscallConn()
	if err != nil {
		return 0, true, r.errorf("sendfile", 0, err)
	}
	off, remaining := r.Off, r.Len
	var opErr error
	werr := dst.Write(func(outfd uintptr) bool {
		for remaining > 0 {
			n, e := sendfileOnce(src, int(outfd), &off, remaining)
			written += int64(n)
			remaining -= int64(n)
			switch {
			case e == unix.EAGAIN:
				return false // poller waits for writable, then calls again
			case e != nil:
				opErr = e
				return true
			case n == 0:
				opErr = ErrTruncated
				return true
			}
		}
		return true
	})
	if opErr == nil {
		opErr = werr
	}
	if opErr == nil {
		return written, true, nil
	}
	if written == 0 && unsupportedSendfile(opErr) {
		return 0, false, nil
	}
	return written, true, r.errorf("sendfile", written, opErr)
}

// unsupportedSendfile reports errors meaning "this descriptor pair cannot do
// sendfile" (e.g. a destination opened O_APPEND, or a kernel without it), as
// opposed to a failure of the transfer itself.
func unsupportedSendfile(err error) bool {
	return errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) ||
		errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EBADF)
}

// sendfileOnce performs one sendfile(2) from src at *off to outfd, retrying
// EINTR. The runtime holds a reference on src's descriptor for the duration
// of the syscall, so a concurrent Close cannot make the call read a recycled
// fd; it returns the closed-file error instead.
func sendfileOnce(src syscall.RawConn, outfd int, off *int64, remaining int64) (int, error) {
	var n int
	var e error
	cerr := src.Control(func(infd uintptr) {
		for {
			n, e = unix.Sendfile(outfd, int(infd), off, int(min(remaining, maxSendfileChunk)))
			if e != unix.EINTR {
				return
			}
		}
	})
	if cerr != nil {
		return 0, closedError(cerr)
	}
	return max(n, 0), e
}

// closedError maps the error of RawConn.Control, which fails only when the
// descriptor is closing, to one that wraps os.ErrClosed as os.File's own
// methods do.
func closedError(err error) error {
	return fmt.Errorf("%w (%v)", os.ErrClosed, err)
}

// SendTo is for a NON-BLOCKING socket fd driven by an event loop (epoll). It
// sendfiles as much as the socket takes and advances r.Off and r.Len by what
// was sent. It returns (n, nil) once r.Len reaches 0, and (n, unix.EAGAIN)
// (the bare errno, so err == unix.EAGAIN holds) when the socket buffer is
// full: the caller waits for EPOLLOUT and calls SendTo again, which resumes
// at exactly the next unsent byte. EINTR is retried. Any other error is
// returned wrapped in a *RegionError; if the file ended before the region,
// the error wraps ErrTruncated (Kafka closes the connection in that case).
func (r *Region) SendTo(fd int) (int64, error) {
	if r.Len <= 0 {
		return 0, nil
	}
	if r.File == nil {
		return 0, r.errorf("sendfile", 0, ErrNoFile)
	}
	src, err := r.File.SyscallConn()
	if err != nil {
		return 0, r.errorf("sendfile", 0, err)
	}
	var sent int64
	for r.Len > 0 {
		off := r.Off
		n, e := sendfileOnce(src, fd, &off, r.Len)
		sent += int64(n)
		r.Off += int64(n)
		r.Len -= int64(n)
		switch {
		case e == unix.EAGAIN:
			return sent, unix.EAGAIN
		case e != nil:
			return sent, r.errorf("sendfile", 0, e)
		case n == 0:
			return sent, r.errorf("sendfile", 0, ErrTruncated)
		}
	}
	return sent, nil
}

// copyTo is the copying path of WriteTo: pread into a pooled buffer, write.
func (r Region) copyTo(w io.Writer) (int64, error) {
	bp := getCopyBuf()
	defer putCopyBuf(bp)
	buf := *bp
	var written int64
	for written < r.Len {
		chunk := buf[:min(int64(len(buf)), r.Len-written)]
		n, err := r.File.ReadAt(chunk, r.Off+written)
		if n > 0 {
			m, werr := w.Write(chunk[:n])
			written += int64(m)
			if werr != nil {
				return written, r.errorf("copy", written, werr)
			}
		}
		if err == io.EOF || (err == nil && n == 0) {
			return written, r.errorf("copy", written, ErrTruncated)
		}
		if err != nil {
			return written, r.errorf("copy", written, err)
		}
	}
	return written, nil
}

// ReadAt is an io.ReaderAt view of the region (the copying variant): off is
// relative to the region's start. Following io.ReaderAt, it returns io.EOF
// when p reaches past the region's end; if the file ends before the region
// does, the error wraps ErrTruncated.
func (r Region) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, r.errorf("read", off, errors.New("negative offset"))
	}
	if off >= r.Len {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	want := min(int64(len(p)), r.Len-off)
	if r.File == nil {
		return 0, r.errorf("read", off, ErrNoFile)
	}
	n, err := r.File.ReadAt(p[:want], r.Off+off)
	if int64(n) < want {
		if err == nil || err == io.EOF {
			err = ErrTruncated
		}
		return n, r.errorf("read", off+int64(n), err)
	}
	if want < int64(len(p)) {
		return n, io.EOF
	}
	return n, nil
}

// Bytes copies the whole region into a new slice (the copying variant).
func (r Region) Bytes() ([]byte, error) {
	if r.Len <= 0 {
		return []byte{}, nil
	}
	b := make([]byte, r.Len)
	n, err := r.ReadAt(b, 0)
	if err != nil && err != io.EOF {
		return b[:n], err
	}
	return b, nil
}

// errorf builds a *RegionError for an operation that failed done bytes into r.
func (r Region) errorf(op string, done int64, err error) error {
	name := ""
	if r.File != nil {
		name = r.File.Name()
	}
	return &RegionError{Op: op, Name: name, Off: r.Off + done, Len: r.Len - done, Err: err}
}
