package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/varve/varve/record"
)

// errBadFileName: a segment file whose name is not a 20-digit base offset.
var errBadFileName = errors.New("not a segment file name")

// scannedBatch is one batch read from a .log file. Bytes aliases the
// scanner's buffer and is valid until the next batch is read.
type scannedBatch struct {
	Pos    int64
	Header record.BatchHeader
	Bytes  []byte
	// Invalid is why the batch fails record.ValidateBatch (a CRC
	// mismatch, an inconsistent header, a magic other than 2), nil when it
	// passes.
	Invalid error
}

// scanTail says how a scan ended.
type scanTail struct {
	ValidBytes int64  // bytes of whole batches read
	FileSize   int64  // size of the .log file
	Limit      int64  // bytes the scan was allowed to read (--max-bytes)
	Reason     string // why the bytes after ValidBytes are not a batch, "" at a clean end
}

// TrailingBytes is how many bytes after the last whole batch the scan
// could not read as a batch.
func (t scanTail) TrailingBytes() int64 { return min(t.Limit, t.FileSize) - t.ValidBytes }

// logScanner reads the batches of a .log file in order, trusting nothing:
// each length is checked against what is left of the file before any
// buffer is sized by it. It never writes.
type logScanner struct {
	r        *bufio.Reader
	pos      int64
	end      int64 // min(file size, limit)
	maxBatch int
	buf      []byte
	tail     scanTail
}

// scanLog calls fn for every whole batch of the .log file at path, up to
// limit bytes and batches of at most maxBatch bytes, and reports how the
// file ends.
func scanLog(path string, limit int64, maxBatch int, fn func(scannedBatch) error) (scanTail, error) {
	f, err := os.Open(path)
	if err != nil {
		return scanTail{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return scanTail{}, err
	}
	s := &logScanner{
		r:        bufio.NewReaderSize(f, 1<<20),
		end:      min(fi.Size(), limit),
		maxBatch: maxBatch,
		tail:     scanTail{FileSize: fi.Size(), Limit: limit},
	}
	for {
		b, ok, err := s.next()
		if err != nil {
			return s.tail, fmt.Errorf("read %s at byte %d: %w", path, s.pos, err)
		}
		if !ok {
			break
		}
		if err := fn(b); err != nil {
			return s.tail, err
		}
	}
	s.tail.ValidBytes = s.pos
	return s.tail, nil
}

// next reads the batch at s.pos; ok is false at the end of the file or at
// bytes that cannot be a batch (tail.Reason then says why).
func (s *logScanner) next() (scannedBatch, bool, error) {
	left := s.end - s.pos
	if left == 0 {
		return scannedBatch{}, false, nil
	}
	if left < record.BatchHeaderSize {
		s.tail.Reason = fmt.Sprintf("torn batch: %d trailing bytes, a batch header has %d", left, record.BatchHeaderSize)
		return scannedBatch{}, false, nil
	}
	hdr, err := s.r.Peek(record.BatchHeaderSize)
	if err != nil {
		return scannedBatch{}, false, err
	}
	size := int64(record.LogOverhead) + int64(int32(binary.BigEndian.Uint32(hdr[record.LengthPos:])))
	if reason := s.badSize(size, left); reason != "" {
		s.tail.Reason = reason
		return scannedBatch{}, false, nil
	}
	if int64(cap(s.buf)) < size {
		s.buf = make([]byte, size)
	}
	s.buf = s.buf[:size]
	if _, err := io.ReadFull(s.r, s.buf); err != nil {
		return scannedBatch{}, false, err
	}
	b := scannedBatch{Pos: s.pos, Bytes: s.buf}
	b.Header, _ = record.ParseHeader(s.buf)
	if b.Header.Magic == record.MagicV2 {
		_, b.Invalid = record.ValidateBatch(s.buf)
	} else {
		b.Invalid = fmt.Errorf("magic %d: only magic %d batches are decoded", b.Header.Magic, record.MagicV2)
	}
	s.pos += size
	return b, true, nil
}

// badSize says why a batch of size bytes cannot start here with left
// bytes remaining, or "".
func (s *logScanner) badSize(size, left int64) string {
	switch {
	case size < record.BatchHeaderSize:
		return fmt.Sprintf("batch length %d is below the minimum %d", size-record.LogOverhead, record.BatchHeaderSize-record.LogOverhead)
	case size > int64(s.maxBatch):
		return fmt.Sprintf("batch of %d bytes is larger than the maximum %d", size, s.maxBatch)
	case size > left:
		return fmt.Sprintf("torn batch: batch of %d bytes, %d bytes left", size, left)
	}
	return ""
}
