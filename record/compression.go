package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Compression is a batch's codec, attribute bits 0-2 (CompressionType.java).
type Compression int8

// Kafka's compression type ids.
const (
	CompressionNone   Compression = 0
	CompressionGzip   Compression = 1
	CompressionSnappy Compression = 2
	CompressionLZ4    Compression = 3
	CompressionZstd   Compression = 4
)

// DefaultMaxDecompressedBytes bounds what one batch may decompress to when
// the caller sets no other bound, so that a decompression bomb fails instead
// of allocating without limit.
const DefaultMaxDecompressedBytes = 64 << 20

// String returns Kafka's name for the codec (compression.type values).
func (c Compression) String() string {
	switch c {
	case CompressionNone:
		return "none"
	case CompressionGzip:
		return "gzip"
	case CompressionSnappy:
		return "snappy"
	case CompressionLZ4:
		return "lz4"
	case CompressionZstd:
		return "zstd"
	}
	return fmt.Sprintf("unknown(%d)", int8(c))
}

// ParseCompression maps a compression.type name to its codec.
func ParseCompression(name string) (Compression, error) {
	for c := CompressionNone; c <= CompressionZstd; c++ {
		if c.String() == name {
			return c, nil
		}
	}
	return 0, fmt.Errorf("segment: unknown compression type %q", name)
}

func (c Compression) valid() bool { return c >= CompressionNone && c <= CompressionZstd }

// How each codec is framed, matching what the Java producer writes:
//
//   - gzip: a gzip member (RFC 1952), default level (Java's GZIPOutputStream).
//   - snappy: xerial framing (snappy-java's SnappyOutputStream): the 16-byte
//     header 0x82 "SNAPPY" 0x00, version 1 (int32), compatible version 1
//     (int32), then blocks of at most 32 KiB of input, each a big-endian
//     int32 length followed by a raw snappy block. Readers also accept one
//     raw snappy block without framing, as snappy-java does.
//   - lz4: one LZ4 frame (lz4 frame format 1.5): 64 KiB independent blocks,
//     no block or content checksum, as KafkaLZ4BlockOutputStream writes.
//   - zstd: one zstd frame (RFC 8878), default level (Kafka's level 3).
var (
	xerialMagic  = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}
	xerialHeader = append(append([]byte{}, xerialMagic...), 0, 0, 0, 1, 0, 0, 0, 1)
)

const (
	xerialHeaderSize = 16
	xerialBlockSize  = 32 << 10
)

// appendWriter is an io.Writer that appends to a slice it owns.
type appendWriter struct{ buf []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	return len(p), nil
}

type gzipEncoder struct {
	w   *gzip.Writer
	out appendWriter
}

type lz4Encoder struct {
	w   *lz4.Writer
	out appendWriter
}

var (
	gzipEncoders = sync.Pool{New: func() any {
		e := new(gzipEncoder)
		e.w, _ = gzip.NewWriterLevel(&e.out, gzip.DefaultCompression)
		return e
	}}
	lz4Encoders = sync.Pool{New: func() any {
		e := new(lz4Encoder)
		e.w = lz4.NewWriter(&e.out)
		// The options are valid constants; Apply cannot fail on a new writer.
		_ = e.w.Apply(lz4.BlockSizeOption(lz4.Block64Kb), lz4.ChecksumOption(false),
			lz4.BlockChecksumOption(false), lz4.ConcurrencyOption(1))
		return e
	}}
	// A zstd.Encoder runs EncodeAll calls concurrently with its own pool.
	zstdEncoder = sync.OnceValues(func() (*zstd.Encoder, error) {
		return zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithZeroFrames(true),
			zstd.WithEncoderCRC(false))
	})
)

// compress appends src compressed with c to dst.
func compress(c Compression, dst, src []byte) ([]byte, error) {
	switch c {
	case CompressionNone:
		return append(dst, src...), nil
	case CompressionGzip:
		e := gzipEncoders.Get().(*gzipEncoder)
		defer gzipEncoders.Put(e)
		e.out.buf = dst
		e.w.Reset(&e.out)
		return e.finish(e.w.Write(src))
	case CompressionSnappy:
		return appendXerial(dst, src), nil
	case CompressionLZ4:
		e := lz4Encoders.Get().(*lz4Encoder)
		defer lz4Encoders.Put(e)
		e.out.buf = dst
		e.w.Reset(&e.out)
		return e.finish(e.w.Write(src))
	case CompressionZstd:
		enc, err := zstdEncoder()
		if err != nil {
			return nil, fmt.Errorf("segment: zstd encoder: %w", err)
		}
		return enc.EncodeAll(src, dst), nil
	}
	return nil, fmt.Errorf("segment: compress: unknown compression type id %d", int8(c))
}

func (e *gzipEncoder) finish(_ int, err error) ([]byte, error) {
	if err == nil {
		err = e.w.Close()
	}
	out := e.out.buf
	e.out.buf = nil
	if err != nil {
		return nil, fmt.Errorf("segment: gzip: %w", err)
	}
	return out, nil
}

func (e *lz4Encoder) finish(_ int, err error) ([]byte, error) {
	if err == nil {
		err = e.w.Close()
	}
	out := e.out.buf
	e.out.buf = nil
	if err != nil {
		return nil, fmt.Errorf("segment: lz4: %w", err)
	}
	return out, nil
}

// appendXerial appends src as xerial-framed snappy blocks.
func appendXerial(dst, src []byte) []byte {
	dst = append(dst, xerialHeader...)
	for len(src) > 0 {
		n := min(len(src), xerialBlockSize)
		at := len(dst)
		need := 4 + s2.MaxEncodedLen(n)
		if cap(dst)-at < need {
			dst = append(dst[:cap(dst)], make([]byte, need-(cap(dst)-at))...)
		}
		block := s2.EncodeSnappy(dst[at+4:cap(dst)], src[:n])
		binary.BigEndian.PutUint32(dst[at:at+4], uint32(len(block)))
		dst = dst[:at+4+len(block)]
		src = src[n:]
	}
	return dst
}

// errDecompressLimit is wrapped into ErrBatchTooLarge by decompress.
var errDecompressLimit = errors.New("decompressed size exceeds the limit")

type gzipDecoder struct {
	r   gzip.Reader
	src bytes.Reader
}

type lz4Decoder struct {
	r   *lz4.Reader
	src bytes.Reader
}

var (
	gzipDecoders = sync.Pool{New: func() any { return new(gzipDecoder) }}
	lz4Decoders  = sync.Pool{New: func() any { return &lz4Decoder{r: lz4.NewReader(nil)} }}
	// zstdDecoders holds one *zstd.Decoder per output limit: the limit is a
	// decoder option, and a Decoder runs DecodeAll calls concurrently.
	zstdDecoders sync.Map
)

// decompress decompresses src, compressed with c, into dst[:0] (growing it
// as needed) and returns the result. It fails with an error wrapping
// errDecompressLimit, without allocating more than about limit bytes, when
// the output would exceed limit.
func decompress(c Compression, dst, src []byte, limit int) ([]byte, error) {
	dst = dst[:0]
	switch c {
	case CompressionNone:
		if len(src) > limit {
			return nil, errDecompressLimit
		}
		return append(dst, src...), nil
	case CompressionGzip:
		d := gzipDecoders.Get().(*gzipDecoder)
		defer gzipDecoders.Put(d)
		d.src.Reset(src)
		if err := d.r.Reset(&d.src); err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		return readBounded(&d.r, dst, limit)
	case CompressionSnappy:
		return decodeSnappy(dst, src, limit)
	case CompressionLZ4:
		d := lz4Decoders.Get().(*lz4Decoder)
		defer lz4Decoders.Put(d)
		d.src.Reset(src)
		d.r.Reset(&d.src)
		return readBounded(d.r, dst, limit)
	case CompressionZstd:
		return decodeZstd(dst, src, limit)
	}
	return nil, fmt.Errorf("unknown compression type id %d", int8(c))
}

// readBounded reads r to its end into dst, failing once more than limit bytes
// have come out. dst grows by doubling but never past limit+1 bytes.
func readBounded(r io.Reader, dst []byte, limit int) ([]byte, error) {
	for {
		if len(dst) == cap(dst) {
			if len(dst) > limit {
				return nil, errDecompressLimit
			}
			grow := min(max(len(dst), 4<<10), limit+1-len(dst))
			dst = append(dst, make([]byte, grow)...)[:len(dst)]
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if len(dst) > limit {
			return nil, errDecompressLimit
		}
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func decodeSnappy(dst, src []byte, limit int) ([]byte, error) {
	if len(src) >= xerialHeaderSize && bytes.HasPrefix(src, xerialMagic) {
		return decodeXerial(dst, src[xerialHeaderSize:], limit)
	}
	n, err := s2.DecodedLen(src)
	if err != nil {
		return nil, fmt.Errorf("snappy: %w", err)
	}
	if n > limit {
		return nil, errDecompressLimit
	}
	return snappyBlock(dst, src, n)
}

// snappyBlock appends the decoding of one raw snappy block of n bytes.
func snappyBlock(dst, block []byte, n int) ([]byte, error) {
	at := len(dst)
	if cap(dst)-at < n {
		dst = append(dst[:cap(dst)], make([]byte, n-(cap(dst)-at))...)
	}
	out, err := s2.Decode(dst[at:at+n], block)
	if err != nil {
		return nil, fmt.Errorf("snappy: %w", err)
	}
	if len(out) != n {
		return nil, fmt.Errorf("snappy: block decoded to %d bytes, header says %d", len(out), n)
	}
	return dst[:at+n], nil
}

// decodeXerial decodes xerial blocks (the header already stripped), first
// summing the lengths the blocks claim so that the limit holds before any
// output is allocated.
func decodeXerial(dst, blocks []byte, limit int) ([]byte, error) {
	total := 0
	for rest := blocks; len(rest) > 0; {
		block, next, err := nextXerialBlock(rest)
		if err != nil {
			return nil, err
		}
		n, err := s2.DecodedLen(block)
		if err != nil {
			return nil, fmt.Errorf("snappy: %w", err)
		}
		if total += n; total > limit {
			return nil, errDecompressLimit
		}
		rest = next
	}
	if cap(dst) < total {
		dst = make([]byte, 0, total)
	}
	for len(blocks) > 0 {
		block, next, _ := nextXerialBlock(blocks) // checked above
		n, _ := s2.DecodedLen(block)
		var err error
		if dst, err = snappyBlock(dst, block, n); err != nil {
			return nil, err
		}
		blocks = next
	}
	return dst, nil
}

func nextXerialBlock(b []byte) (block, rest []byte, err error) {
	if len(b) < 4 {
		return nil, nil, errors.New("snappy: truncated xerial block length")
	}
	n := binary.BigEndian.Uint32(b)
	if uint64(n) > uint64(len(b)-4) {
		return nil, nil, fmt.Errorf("snappy: xerial block of %d bytes, %d left", n, len(b)-4)
	}
	return b[4 : 4+n], b[4+n:], nil
}

// decodeZstd decodes with the cached decoder of the power of two at or
// above limit, so that limits chosen by clients (a fetch's max bytes)
// make at most a few dozen decoders, and checks limit itself after.
func decodeZstd(dst, src []byte, limit int) ([]byte, error) {
	d, err := zstdDecoder(1 << bits.Len(uint(max(limit, 1)-1)))
	if err != nil {
		return nil, err
	}
	out, err := d.DecodeAll(src, dst)
	if errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrWindowSizeExceeded) || len(out) > limit {
		return nil, fmt.Errorf("%w: zstd: %v", errDecompressLimit, err)
	}
	if err != nil {
		return nil, fmt.Errorf("zstd: %w", err)
	}
	return out, nil
}

func zstdDecoder(limit int) (*zstd.Decoder, error) {
	if d, ok := zstdDecoders.Load(limit); ok {
		return d.(*zstd.Decoder), nil
	}
	d, err := zstd.NewReader(nil, zstd.WithDecoderMaxMemory(uint64(max(limit, 1))),
		zstd.WithDecoderLowmem(true), zstd.WithDecoderConcurrency(0))
	if err != nil {
		return nil, fmt.Errorf("zstd decoder: %w", err)
	}
	actual, loaded := zstdDecoders.LoadOrStore(limit, d)
	if loaded {
		d.Close()
	}
	return actual.(*zstd.Decoder), nil
}
