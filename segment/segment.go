package segment

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/varve/varve/index"
	"github.com/varve/varve/record"
)

// File name suffixes, as Kafka's LogFileUtils names them.
const (
	LogSuffix       = ".log"
	IndexSuffix     = ".index"
	TimeIndexSuffix = ".timeindex"
	DeletedSuffix   = ".deleted"
	CleanedSuffix   = ".cleaned"
	SwapSuffix      = ".swap"
)

// FilenamePrefix is a segment's base offset as Kafka names files: 20
// zero-padded digits.
func FilenamePrefix(baseOffset int64) string { return fmt.Sprintf("%020d", baseOffset) }

// noTimestamp is Kafka's RecordBatch.NO_TIMESTAMP.
const noTimestamp = -1

// A Segment is one .log file with its offset and time indexes. Its
// offsets start at its base offset; appends come from the log's single
// writer, reads from any goroutine.
type Segment struct {
	base    int64
	dir     string
	cfg     *Config
	log     File                   // never replaced: readers use it without locks
	name    atomic.Pointer[string] // the .log file's current path (renames change it)
	offsets *index.OffsetIndex
	times   *index.TimeIndex

	// Published to readers after each append.
	size atomic.Int64 // bytes of whole batches
	next atomic.Int64 // offset after the last batch; base when empty

	// Writer state. REQUIRES the log's writer lock.
	bytesSinceIndex      int
	maxTimestamp         int64 // largest batch max timestamp so far
	offsetOfMaxTimestamp int64
	rollingBase          int64     // first batch's max timestamp, noTimestamp if none
	created              time.Time // wall clock at creation, for segment.ms without timestamps
	jitter               time.Duration
	closed               bool
	indexesMissing       bool // set by openSegment: an index file had to be created
}

func segmentPaths(dir string, base int64, suffix string) (log, idx, tidx string) {
	p := filepath.Join(dir, FilenamePrefix(base))
	return p + LogSuffix + suffix, p + IndexSuffix + suffix, p + TimeIndexSuffix + suffix
}

// createSegment makes a new, empty segment at base. suffix is "" for a
// live segment and CleanedSuffix for compaction output.
func createSegment(dir string, base int64, cfg *Config, suffix string) (*Segment, error) {
	logPath, idxPath, tidxPath := segmentPaths(dir, base, suffix)
	f, err := cfg.FS.OpenFile(logPath, os.O_CREATE|os.O_RDWR|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, ioErr("create segment", logPath, err)
	}
	for _, p := range []string{idxPath, tidxPath} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			f.Close()
			return nil, ioErr("remove stale index", p, err)
		}
	}
	s := newSegment(dir, base, cfg, f)
	if err := s.openIndexes(idxPath, tidxPath); err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

func newSegment(dir string, base int64, cfg *Config, f File) *Segment {
	s := &Segment{
		base: base, dir: dir, cfg: cfg, log: f,
		maxTimestamp:         noTimestamp,
		offsetOfMaxTimestamp: base,
		rollingBase:          noTimestamp,
		created:              cfg.Now(),
	}
	if j := min(cfg.SegmentJitterMs, cfg.SegmentMs); j > 0 {
		s.jitter = time.Duration(rand.Int64N(int64(j)))
	}
	name := f.Name()
	s.name.Store(&name)
	s.next.Store(base)
	return s
}

func (s *Segment) openIndexes(idxPath, tidxPath string) error {
	oi, err := index.OpenOffsetIndex(idxPath, s.base, s.cfg.SegmentIndexBytes)
	if err != nil {
		return fmt.Errorf("segment %s: %w", FilenamePrefix(s.base), err)
	}
	ti, err := index.OpenTimeIndex(tidxPath, s.base, s.cfg.SegmentIndexBytes)
	if err != nil {
		oi.Close()
		return fmt.Errorf("segment %s: %w", FilenamePrefix(s.base), err)
	}
	s.offsets, s.times = oi, ti
	return nil
}

// BaseOffset is the offset of the segment's first batch (or the offset
// its first batch will get).
func (s *Segment) BaseOffset() int64 { return s.base }

// NextOffset is the offset after the segment's last batch.
func (s *Segment) NextOffset() int64 { return s.next.Load() }

// Size is the number of bytes of whole batches in the .log file.
func (s *Segment) Size() int64 { return s.size.Load() }

// Path is the .log file's path.
func (s *Segment) Path() string { return *s.name.Load() }

// MaxTimestamp is the largest batch timestamp in the segment, or -1 when
// no batch carries one. REQUIRES the log's writer lock (cleaners and
// retention read it through Log.Segments).
func (s *Segment) MaxTimestamp() int64 { return s.maxTimestamp }

// LargestTimestamp is what retention judges a segment's age by: its
// largest record timestamp, or its file's modification time when no
// record has a timestamp (Kafka's LogSegment.largestTimestamp).
func (s *Segment) LargestTimestamp() int64 {
	if s.maxTimestamp > 0 {
		return s.maxTimestamp
	}
	if f := s.log.OS(); f != nil {
		if fi, err := f.Stat(); err == nil {
			return fi.ModTime().UnixMilli()
		}
	}
	return noTimestamp
}

// indexFull says whether either index can take no more entries.
func (s *Segment) indexFull() bool { return s.offsets.IsFull() || s.times.IsFull() }

// shouldRoll is Kafka's LogSegment.shouldRoll, asked before appending a
// batch of batchSize bytes whose max timestamp is maxTs and last offset
// is lastOffset.
func (s *Segment) shouldRoll(batchSize int64, maxTs, lastOffset int64) bool {
	size := s.size.Load()
	switch {
	case size > s.cfg.SegmentBytes-batchSize:
		return true
	case size > 0 && s.timeWaitedForRoll(maxTs) > s.cfg.SegmentMs-s.jitter:
		return true
	case s.indexFull():
		return true
	case lastOffset-s.base > math.MaxInt32 || lastOffset < s.base:
		return true
	}
	return false
}

func (s *Segment) timeWaitedForRoll(newMaxTs int64) time.Duration {
	if s.rollingBase != noTimestamp {
		return time.Duration(newMaxTs-s.rollingBase) * time.Millisecond
	}
	return s.cfg.Now().Sub(s.created)
}

// append writes one whole, validated batch at the end of the segment and
// indexes it as Kafka's LogSegment.append does. REQUIRES the writer lock.
func (s *Segment) append(b []byte, h record.BatchHeader) error {
	pos := s.size.Load()
	if _, err := s.log.WriteAt(b, pos); err != nil {
		return ioErr("append", s.Path(), err)
	}
	s.track(h, pos, len(b))
	if err := s.maybeIndex(h, pos); err != nil {
		return err
	}
	s.size.Store(pos + int64(len(b)))
	s.next.Store(h.NextOffset())
	return nil
}

// track updates the segment's timestamp bookkeeping for a batch at pos.
func (s *Segment) track(h record.BatchHeader, pos int64, size int) {
	if s.rollingBase == noTimestamp && pos == 0 {
		s.rollingBase = h.MaxTimestamp
	}
	if h.MaxTimestamp > s.maxTimestamp {
		s.maxTimestamp = h.MaxTimestamp
		s.offsetOfMaxTimestamp = h.LastOffset()
	}
}

// maybeIndex adds index entries once index.interval.bytes have passed
// since the last one. As in Kafka, the test happens before this batch's
// bytes are counted, so a segment's first batch is never indexed.
func (s *Segment) maybeIndex(h record.BatchHeader, pos int64) error {
	if s.bytesSinceIndex > s.cfg.IndexIntervalBytes {
		if err := s.offsets.Append(h.LastOffset(), pos); err != nil {
			return fmt.Errorf("segment %s: offset index: %w", FilenamePrefix(s.base), err)
		}
		if err := s.times.MaybeAppend(s.maxTimestamp, s.offsetOfMaxTimestamp, false); err != nil {
			return fmt.Errorf("segment %s: time index: %w", FilenamePrefix(s.base), err)
		}
		s.bytesSinceIndex = 0
	}
	s.bytesSinceIndex += int(h.Size())
	return nil
}

// header reads the batch header at pos.
func (s *Segment) header(pos int64, buf *[record.BatchHeaderSize]byte) (record.BatchHeader, error) {
	if _, err := s.log.ReadAt(buf[:], pos); err != nil {
		return record.BatchHeader{}, ioErr("read", s.Path(), err)
	}
	return record.ParseHeader(buf[:])
}

// translate finds the first batch at or after startPos whose last offset
// is at least offset, looking no further than limit bytes. It returns
// its position and header, or found=false.
func (s *Segment) translate(offset, startPos, limit int64) (pos int64, h record.BatchHeader, found bool, err error) {
	var buf [record.BatchHeaderSize]byte
	for pos = startPos; pos+record.BatchHeaderSize <= limit; pos += h.Size() {
		if h, err = s.header(pos, &buf); err != nil {
			return 0, h, false, err
		}
		if h.Size() < record.BatchHeaderSize {
			return 0, h, false, fmt.Errorf("%w: %s at %d: batch length %d", ErrCorruptLog, s.Path(), pos, h.Length)
		}
		if h.LastOffset() >= offset {
			return pos, h, true, nil
		}
	}
	return 0, h, false, nil
}

// positionOf returns the byte position of the first batch whose last
// offset is at least offset, or the segment's size when there is none.
func (s *Segment) positionOf(offset int64) (int64, error) {
	size := s.size.Load()
	start := s.offsets.Lookup(offset).Position
	pos, _, found, err := s.translate(offset, start, size)
	if err != nil || !found {
		return size, err
	}
	return pos, nil
}

// read returns the region holding offset and what follows, up to maxBytes
// and never past maxPosition. As in Kafka, the region may end inside a
// batch; with minOneBatch a first batch larger than maxBytes is returned
// whole (KIP-74). found is false when the segment holds no batch ending at
// or after offset.
func (s *Segment) read(offset int64, maxBytes int, maxPosition int64, minOneBatch bool) (pos, n int64, found bool, err error) {
	start := s.offsets.Lookup(offset).Position
	pos, h, found, err := s.translate(offset, start, maxPosition)
	if err != nil || !found {
		return 0, 0, false, err
	}
	n = min(int64(maxBytes), maxPosition-pos)
	if minOneBatch && n < h.Size() {
		n = min(h.Size(), maxPosition-pos)
	}
	return pos, n, true, nil
}

// flushLog makes the segment's .log durable (fdatasync).
func (s *Segment) flushLog() error {
	return ioErr("fsync", s.Path(), s.log.Sync())
}

// flush makes the segment's log and indexes durable.
func (s *Segment) flush() error {
	if err := s.flushLog(); err != nil {
		return err
	}
	if err := s.offsets.Flush(); err != nil {
		return fmt.Errorf("segment %s: %w", FilenamePrefix(s.base), err)
	}
	if err := s.times.Flush(); err != nil {
		return fmt.Errorf("segment %s: %w", FilenamePrefix(s.base), err)
	}
	return nil
}

// seal is Kafka's onBecomeInactiveSegment: a final time-index entry, then
// both indexes trimmed to their entries.
func (s *Segment) seal() error {
	if s.maxTimestamp != noTimestamp {
		if err := s.times.MaybeAppend(s.maxTimestamp, s.offsetOfMaxTimestamp, true); err != nil {
			return fmt.Errorf("segment %s: time index: %w", FilenamePrefix(s.base), err)
		}
	}
	if err := s.offsets.TrimToValidSize(); err != nil {
		return fmt.Errorf("segment %s: %w", FilenamePrefix(s.base), err)
	}
	if err := s.times.TrimToValidSize(); err != nil {
		return fmt.Errorf("segment %s: %w", FilenamePrefix(s.base), err)
	}
	return nil
}

// truncateTo removes every batch whose last offset is at least offset
// and returns the number of bytes removed. REQUIRES the writer lock.
func (s *Segment) truncateTo(offset int64) (int64, error) {
	pos, err := s.positionOf(offset)
	if err != nil {
		return 0, err
	}
	old := s.size.Load()
	if pos >= old {
		return 0, nil
	}
	if err := s.offsets.TruncateTo(offset); err != nil {
		return 0, err
	}
	if err := s.times.TruncateTo(offset); err != nil {
		return 0, err
	}
	if err := s.log.Truncate(pos); err != nil {
		return 0, ioErr("truncate", s.Path(), err)
	}
	s.size.Store(pos)
	if err := s.reloadState(); err != nil {
		return 0, err
	}
	return old - pos, nil
}

// reloadState recomputes the next offset, timestamps and the bytes since
// the last index entry by scanning batch headers from the last index
// entry to the end. It trusts the headers (they were validated when
// written or recovered). REQUIRES the writer lock.
func (s *Segment) reloadState() error {
	size := s.size.Load()
	s.next.Store(s.base)
	s.maxTimestamp, s.offsetOfMaxTimestamp, s.rollingBase = noTimestamp, s.base, noTimestamp
	if te := s.times.LastEntry(); te.Timestamp != noTimestamp {
		s.maxTimestamp, s.offsetOfMaxTimestamp = te.Timestamp, te.Offset
	}
	var buf [record.BatchHeaderSize]byte
	if size >= record.BatchHeaderSize {
		h, err := s.header(0, &buf)
		if err != nil {
			return err
		}
		s.rollingBase = h.MaxTimestamp
	}
	start := int64(0)
	if n := s.offsets.Entries(); n > 0 {
		start = s.offsets.Entry(n - 1).Position
	}
	if te := s.times.LastEntry(); te.Timestamp != noTimestamp {
		start = min(start, s.offsets.Lookup(te.Offset).Position)
	}
	s.bytesSinceIndex = 0
	for pos := start; pos < size; {
		h, err := s.header(pos, &buf)
		if err != nil {
			return err
		}
		if h.Size() < record.BatchHeaderSize || pos+h.Size() > size {
			return fmt.Errorf("%w: %s at %d: batch of %d bytes overruns the segment (%d bytes)", ErrCorruptLog, s.Path(), pos, h.Size(), size)
		}
		if h.MaxTimestamp > s.maxTimestamp {
			s.maxTimestamp, s.offsetOfMaxTimestamp = h.MaxTimestamp, h.LastOffset()
		}
		if n := s.offsets.Entries(); n == 0 || pos > s.offsets.Entry(n-1).Position {
			s.bytesSinceIndex += int(h.Size())
		} else {
			s.bytesSinceIndex = int(h.Size())
		}
		s.next.Store(h.NextOffset())
		pos += h.Size()
	}
	return nil
}

// close trims and closes the segment's files. Idempotent.
func (s *Segment) close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	err := s.offsets.Close()
	if e := s.times.Close(); err == nil {
		err = e
	}
	if e := s.log.Close(); err == nil {
		err = ioErr("close", s.Path(), e)
	}
	return err
}

// renameTo gives the segment's three files a new suffix ("" for live
// names, DeletedSuffix, SwapSuffix, ...).
func (s *Segment) renameTo(suffix string) error {
	logPath, idxPath, tidxPath := segmentPaths(s.dir, s.base, suffix)
	if err := s.cfg.FS.Rename(s.Path(), logPath); err != nil {
		return ioErr("rename", s.Path(), err)
	}
	s.name.Store(&logPath)
	if err := s.offsets.Rename(idxPath); err != nil {
		return err
	}
	return s.times.Rename(tidxPath)
}

// remove closes the segment and deletes its files.
func (s *Segment) remove() error {
	name := s.Path()
	err := s.close()
	if e := s.cfg.FS.Remove(name); e != nil && !errors.Is(e, os.ErrNotExist) && err == nil {
		err = ioErr("remove", name, e)
	}
	for _, p := range []string{s.offsets.Path(), s.times.Path()} {
		if e := os.Remove(p); e != nil && !errors.Is(e, os.ErrNotExist) && err == nil {
			err = ioErr("remove", p, e)
		}
	}
	return err
}
