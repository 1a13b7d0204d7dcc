package record

import (
	"bytes"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// streamWindow is the size of the window a compressed records section is
// read through: a record larger than it is skipped over, never held.
const streamWindow = 32 << 10

// zstdMaxWindow bounds the window a produced zstd frame may ask the
// decoder for. The zstd format recommends decoders accept 8 MiB; the Java
// producer's level 3 uses at most 2 MiB.
const zstdMaxWindow = 8 << 20

// recordSource reads the records section of one batch: the section itself
// when it is uncompressed (r == nil), or a decompressing reader seen
// through the window buf. It never holds more than one window of output,
// and fails with errDecompressLimit once more than limit bytes came out.
type recordSource struct {
	r     io.Reader
	buf   []byte // unread bytes are buf[at:]
	at    int
	base  int64 // position in the section of buf[0]
	limit int64
	err   error // sticky error of r; io.EOF at its end
}

// pos is the position of the next unread byte in the records section.
func (s *recordSource) pos() int64 { return s.base + int64(s.at) }

// avail is how many bytes can be read without touching r.
func (s *recordSource) avail() int { return len(s.buf) - s.at }

// fill tries to make n bytes available (n <= the window) and reports
// whether it did.
func (s *recordSource) fill(n int) bool {
	if s.avail() >= n {
		return true
	}
	if s.r == nil || s.err != nil {
		return false
	}
	kept := copy(s.buf[:cap(s.buf)], s.buf[s.at:])
	s.base += int64(s.at)
	s.buf, s.at = s.buf[:kept], 0
	for len(s.buf) < n && s.err == nil {
		m, err := s.r.Read(s.buf[len(s.buf):cap(s.buf)])
		s.buf = s.buf[:len(s.buf)+m]
		switch {
		case s.base+int64(len(s.buf)) > s.limit:
			s.err = errDecompressLimit
		case err != nil:
			s.err = err
		case m == 0:
			s.err = io.ErrNoProgress
		}
	}
	return len(s.buf) >= n
}

// varint reads a zigzag varint; ok is false if the encoding is bad or the
// section ends first.
func (s *recordSource) varint() (int32, bool) {
	s.fill(maxVarintLen)
	v, n := readVarint(s.buf[s.at:])
	if n <= 0 {
		return 0, false
	}
	s.at += n
	return v, true
}

// varlong reads a zigzag varlong, as varint.
func (s *recordSource) varlong() (int64, bool) {
	s.fill(maxVarlongLen)
	v, n := readVarlong(s.buf[s.at:])
	if n <= 0 {
		return 0, false
	}
	s.at += n
	return v, true
}

// skip moves past n bytes and reports whether the section held them.
func (s *recordSource) skip(n int64) bool {
	for n > 0 {
		if s.avail() == 0 && !s.fill(1) {
			return false
		}
		k := min(n, int64(s.avail()))
		s.at += int(k)
		n -= k
	}
	return true
}

// atEnd reports whether the section is fully read, reading one more byte
// from r if needed so that a codec's trailer (a gzip CRC) is checked.
func (s *recordSource) atEnd() bool {
	return !s.fill(1) && (s.r == nil || s.err == io.EOF)
}

// codecErr is the decompression failure that ended the section early, or
// nil if the section ended cleanly (or never failed).
func (s *recordSource) codecErr() error {
	if s.err == nil || s.err == io.EOF {
		return nil
	}
	return s.err
}

// decompressors are a Validator's reusable codec readers, created on
// first use. Not safe for concurrent use.
type decompressors struct {
	gzip   gzip.Reader
	lz4    *lz4.Reader
	zstd   *zstd.Decoder
	snappy snappyReader
	src    bytes.Reader
}

// open returns a reader of the section compressed with c, bounded by
// limit output bytes where the codec tells sizes up front (snappy).
func (d *decompressors) open(c Compression, section []byte, limit int) (io.Reader, error) {
	d.src.Reset(section)
	switch c {
	case CompressionGzip:
		if err := d.gzip.Reset(&d.src); err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		d.gzip.Multistream(false)
		return &d.gzip, nil
	case CompressionLZ4:
		if d.lz4 == nil {
			d.lz4 = lz4.NewReader(nil)
		}
		d.lz4.Reset(&d.src)
		return d.lz4, nil
	case CompressionZstd:
		return d.openZstd()
	case CompressionSnappy:
		d.snappy.reset(section, limit)
		return &d.snappy, nil
	}
	return nil, fmt.Errorf("unknown compression type id %d", int8(c))
}

func (d *decompressors) openZstd() (io.Reader, error) {
	if d.zstd == nil {
		z, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(zstdMaxWindow))
		if err != nil {
			return nil, fmt.Errorf("zstd decoder: %w", err)
		}
		d.zstd = z
	}
	if err := d.zstd.Reset(&d.src); err != nil {
		return nil, fmt.Errorf("zstd: %w", err)
	}
	return d.zstd, nil
}

// snappyReader reads snappy as Kafka's producers write it (see
// compression.go): xerial blocks decoded one at a time into a reused
// buffer, or one raw block. A block claiming more than limit bytes fails
// before anything is allocated for it.
type snappyReader struct {
	rest   []byte // blocks not yet decoded (or the raw block)
	raw    bool
	out    []byte // decoded bytes of the current block, unread from at
	at     int
	limit  int
	buffer []byte
}

func (r *snappyReader) reset(section []byte, limit int) {
	r.rest, r.raw, r.out, r.at, r.limit = section, true, nil, 0, limit
	if len(section) >= xerialHeaderSize && bytes.HasPrefix(section, xerialMagic) {
		r.rest, r.raw = section[xerialHeaderSize:], false
	}
}

func (r *snappyReader) Read(p []byte) (int, error) {
	for r.at == len(r.out) {
		if len(r.rest) == 0 {
			return 0, io.EOF
		}
		if err := r.next(); err != nil {
			return 0, err
		}
	}
	n := copy(p, r.out[r.at:])
	r.at += n
	return n, nil
}

// next decodes the next block into out.
func (r *snappyReader) next() error {
	block := r.rest
	r.rest = nil
	if !r.raw {
		var err error
		if block, r.rest, err = nextXerialBlock(block); err != nil {
			return err
		}
	}
	n, err := s2.DecodedLen(block)
	if err != nil {
		return fmt.Errorf("snappy: %w", err)
	}
	if n > r.limit {
		return errDecompressLimit
	}
	if r.out, err = snappyBlock(r.buffer[:0], block, n); err != nil {
		return err
	}
	r.buffer, r.at = r.out, 0
	return nil
}
