package net

import (
	"encoding/binary"
	"errors"
	"io"
)

// Frame layout (Kafka's NetworkReceive), big-endian:
//
//	offset 0  int32  size: number of bytes that follow, 0 <= size <= socket.request.max.bytes
//	offset 4  [size]byte  the request: header (see header.go) then body
//
// The size prefix is part of the wire format and must not change.
const sizePrefixLen = 4

// initialBodyCap is the most a frame buffer holds before its bytes arrive.
// Bodies grow (doubling, capped at the announced size) as bytes come in, so a
// peer that announces 100 MiB and then sends nothing costs this much, not
// 100 MiB. The size prefix itself is checked before any allocation.
const initialBodyCap = 16 << 10

// minDirectRead is the smallest body remainder read straight into the body
// buffer instead of through a scratch buffer, to avoid copying big frames.
const minDirectRead = 32 << 10

// frameDecoder assembles size-prefixed frames from arbitrary chunks of a byte
// stream. It is the framing core shared by the Reactor's processors (which
// feed it from non-blocking reads) and by FrameReader (blocking reads). A
// frameDecoder is used by one goroutine at a time.
//
// A gated decoder (the servers' memory pool) stops after each size prefix:
// awaiting reports the announced size, and no body byte is taken or buffer
// allocated until admit is called.
type frameDecoder struct {
	max   int32
	gated bool
	hdr   [sizePrefixLen]byte
	nhdr  int
	size  int    // announced body size once the prefix is complete, -1 before
	open  bool   // the body has been admitted: body exists
	body  []byte // body bytes received so far
}

func newFrameDecoder(max int32) frameDecoder {
	return frameDecoder{max: max, size: -1}
}

// newGatedDecoder returns a decoder that waits for admit after each prefix.
func newGatedDecoder(max int32) frameDecoder {
	return frameDecoder{max: max, size: -1, gated: true}
}

// awaiting returns the announced size of a frame whose prefix is complete
// and whose body has not been admitted yet.
func (d *frameDecoder) awaiting() (int, bool) {
	return d.size, d.size >= 0 && !d.open
}

// inFrame reports whether part of a frame has been received.
func (d *frameDecoder) inFrame() bool { return d.nhdr > 0 }

// feed consumes bytes of p up to the end of the current frame. It returns how
// many bytes it consumed and, when that completed a frame, the frame's body
// (owned by the caller from then on). Bytes after a completed frame are left
// in p for the next call. A size prefix out of range yields *FrameSizeError
// before anything is allocated; the decoder must not be used after an error.
func (d *frameDecoder) feed(p []byte) (n int, frame []byte, err error) {
	if d.size < 0 {
		k := copy(d.hdr[d.nhdr:], p)
		d.nhdr += k
		n += k
		p = p[k:]
		if d.nhdr < sizePrefixLen {
			return n, nil, nil
		}
		if err := d.checkSize(); err != nil {
			return n, nil, err
		}
		if !d.gated {
			if frame := d.admit(len(p)); frame != nil {
				return n, frame, nil
			}
		}
	}
	if !d.open {
		return n, nil, nil
	}
	k := min(d.size-len(d.body), len(p))
	d.grow(k)
	d.body = append(d.body, p[:k]...)
	n += k
	return n, d.complete(), nil
}

// checkSize checks the completed size prefix, before anything is allocated.
func (d *frameDecoder) checkSize() error {
	size := int32(binary.BigEndian.Uint32(d.hdr[:]))
	if size < 0 || size > d.max {
		return &FrameSizeError{Size: size, Max: d.max}
	}
	d.size = int(size)
	return nil
}

// admit starts the body announced by the prefix, allocating its first part:
// initialBodyCap, or all of the bytes already at hand (avail), so a frame
// that arrived whole is allocated once. It returns the frame when that is
// already complete (an empty body).
// REQUIRES: awaiting reports true.
func (d *frameDecoder) admit(avail int) []byte {
	d.open = true
	d.body = make([]byte, 0, min(d.size, max(initialBodyCap, avail)))
	return d.complete()
}

// grow makes room for k more body bytes, doubling the capacity (bounded by
// the announced size) so a big frame is copied O(log n) times at most.
func (d *frameDecoder) grow(k int) {
	need := len(d.body) + k
	if need <= cap(d.body) {
		return
	}
	c := max(need, min(2*cap(d.body), d.size))
	nb := make([]byte, len(d.body), c)
	copy(nb, d.body)
	d.body = nb
}

// directSpace returns the unused capacity of the body buffer to read into
// directly, when the rest of the body is at least minDirectRead bytes; nil
// otherwise. The caller then reports what it read with commit.
func (d *frameDecoder) directSpace() []byte {
	if !d.open || d.size-len(d.body) < minDirectRead {
		return nil
	}
	want := min(d.size-len(d.body), max(cap(d.body)-len(d.body), minDirectRead))
	d.grow(want)
	return d.body[len(d.body):cap(d.body)][:want]
}

// commit records n bytes read into the slice directSpace returned and
// returns the frame if that completed it.
func (d *frameDecoder) commit(n int) []byte {
	d.body = d.body[:len(d.body)+n]
	return d.complete()
}

// complete returns the frame and resets the decoder if the body is whole.
func (d *frameDecoder) complete() []byte {
	if !d.open || len(d.body) < d.size {
		return nil
	}
	frame := d.body
	*d = frameDecoder{max: d.max, size: -1, gated: d.gated}
	return frame
}

// FrameReader reads size-prefixed Kafka request frames from a blocking
// reader. It is what the goroutine-per-connection server reads with, and it
// uses the same decoder as the Reactor. A FrameReader is not safe for
// concurrent use.
type FrameReader struct {
	r       io.Reader
	d       frameDecoder
	gate    func(size int) error // with a gated decoder: admit a body of size bytes
	buf     []byte               // read buffer; nil means exact reads (prefix, then body)
	pending []byte               // bytes read past the last frame, not yet fed
	err     error                // sticky error
}

// NewFrameReader returns a reader of frames no larger than maxBytes
// (socket.request.max.bytes). With bufSize > 0 it reads through a buffer of
// that size, which saves a read per small frame; with bufSize 0 it reads the
// 4-byte prefix and then exactly the body, as Kafka's NetworkReceive does.
func NewFrameReader(r io.Reader, maxBytes int32, bufSize int) *FrameReader {
	fr := &FrameReader{r: r, d: newFrameDecoder(maxBytes)}
	if bufSize > 0 {
		fr.buf = make([]byte, bufSize)
	}
	return fr
}

// newGatedFrameReader is NewFrameReader whose reader calls gate with each
// frame's size once its prefix is read, before the body is allocated or
// read; an error from gate ends reading (and is sticky).
func newGatedFrameReader(r io.Reader, maxBytes int32, bufSize int, gate func(size int) error) *FrameReader {
	fr := NewFrameReader(r, maxBytes, bufSize)
	fr.d = newGatedDecoder(maxBytes)
	fr.gate = gate
	return fr
}

// ReadFrame returns the next frame's bytes after the size prefix. The slice
// is the caller's. At a clean end of stream between frames it returns
// io.EOF; in the middle of a frame, io.ErrUnexpectedEOF. A size prefix out of
// range gives *FrameSizeError. Errors are sticky.
func (fr *FrameReader) ReadFrame() ([]byte, error) {
	if fr.err != nil {
		return nil, fr.err
	}
	for {
		frame, err := fr.step()
		if err != nil {
			fr.err = err
			return nil, err
		}
		if frame != nil {
			return frame, nil
		}
	}
}

// step feeds buffered bytes or performs one read; it returns a frame when
// one completed.
func (fr *FrameReader) step() ([]byte, error) {
	if size, ok := fr.d.awaiting(); ok {
		if err := fr.gate(size); err != nil {
			return nil, err
		}
		if frame := fr.d.admit(len(fr.pending)); frame != nil {
			return frame, nil
		}
	}
	if len(fr.pending) > 0 {
		n, frame, err := fr.d.feed(fr.pending)
		fr.pending = fr.pending[n:]
		return frame, err
	}
	if space := fr.d.directSpace(); space != nil {
		n, err := fr.r.Read(space)
		frame := fr.d.commit(n)
		if frame == nil && err != nil {
			return nil, fr.readErr(err)
		}
		return frame, nil
	}
	buf := fr.buf
	if buf == nil {
		buf = fr.exactBuf()
	}
	n, err := fr.r.Read(buf)
	fr.pending = buf[:n]
	if n == 0 && err != nil {
		return nil, fr.readErr(err)
	}
	return nil, nil
}

// exactBuf returns a slice that ends where the current frame does (in
// exact-read mode), so that nothing past the frame is consumed. Like
// directSpace it grows the body at most by doubling, so an announced size
// is never allocated before its bytes arrive.
func (fr *FrameReader) exactBuf() []byte {
	d := &fr.d
	if d.size < 0 {
		return d.hdr[d.nhdr:]
	}
	want := min(d.size-len(d.body), max(cap(d.body)-len(d.body), minDirectRead))
	d.grow(want)
	return d.body[len(d.body) : len(d.body)+want]
}

// readErr converts the error that ended a read: EOF is clean only between
// frames.
func (fr *FrameReader) readErr(err error) error {
	if errors.Is(err, io.EOF) && (fr.d.inFrame() || len(fr.pending) > 0) {
		return io.ErrUnexpectedEOF
	}
	return err
}
