package segment

import (
	"container/list"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
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
// writer, reads from any goroutine. Its files are open only while it is
// pinned (active) or warm in the log's FileCache (files.go); its sizes,
// offsets and timestamps stay in memory when it is cold.
type Segment struct {
	base  int64
	dir   string
	cfg   *Config
	names atomic.Pointer[segNames] // the files' current paths (renames change them)
	h     atomic.Pointer[handle]   // the open files, nil when cold

	openMu  sync.Mutex    // serialises opening, evicting and closing the files
	pinned  bool          // REQUIRES openMu: never closed as cold
	retired bool          // REQUIRES openMu: closed for good, never reopened
	elem    *list.Element // REQUIRES cfg.Files.mu: place in the cache, nil when not in it
	used    atomic.Bool   // read since the cache last looked (CLOCK's reference bit)

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
	sawMarker            bool // recover met a control batch

	txn txnIndex // aborted transactions whose markers the segment holds
}

// segNames are a segment's three file paths.
type segNames struct{ log, idx, tidx string }

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
	for _, p := range []string{idxPath, tidxPath, txnPath(logPath)} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			f.Close()
			return nil, ioErr("remove stale index", p, err)
		}
	}
	s := newSegment(dir, base, cfg, segNames{logPath, idxPath, tidxPath})
	h := &handle{f: f}
	if h.offsets, h.times, err = s.openIndexes(idxPath, tidxPath, cfg.SegmentIndexBytes); err != nil {
		f.Close()
		return nil, err
	}
	h.refs.Store(1)
	s.h.Store(h)
	s.pinned = true
	return s, nil
}

// newSegment returns a cold segment: no file is open.
func newSegment(dir string, base int64, cfg *Config, names segNames) *Segment {
	s := &Segment{
		base: base, dir: dir, cfg: cfg,
		maxTimestamp:         noTimestamp,
		offsetOfMaxTimestamp: base,
		rollingBase:          noTimestamp,
		created:              cfg.Now(),
	}
	if j := min(cfg.SegmentJitterMs, cfg.SegmentMs); j > 0 {
		s.jitter = time.Duration(rand.Int64N(int64(j)))
	}
	s.names.Store(&names)
	s.next.Store(base)
	return s
}

// openIndexes maps both index files (creating them if missing); maxSize
// is segment.index.bytes, what they may grow to.
func (s *Segment) openIndexes(idxPath, tidxPath string, maxSize int) (*index.OffsetIndex, *index.TimeIndex, error) {
	oi, err := index.OpenOffsetIndex(idxPath, s.base, maxSize)
	if err != nil {
		return nil, nil, fmt.Errorf("segment %s: %w", FilenamePrefix(s.base), err)
	}
	ti, err := index.OpenTimeIndex(tidxPath, s.base, maxSize)
	if err != nil {
		oi.Close()
		return nil, nil, fmt.Errorf("segment %s: %w", FilenamePrefix(s.base), err)
	}
	return oi, ti, nil
}

// BaseOffset is the offset of the segment's first batch (or the offset
// its first batch will get).
func (s *Segment) BaseOffset() int64 { return s.base }

// NextOffset is the offset after the segment's last batch.
func (s *Segment) NextOffset() int64 { return s.next.Load() }

// Size is the number of bytes of whole batches in the .log file.
func (s *Segment) Size() int64 { return s.size.Load() }

// Path is the .log file's path.
func (s *Segment) Path() string { return s.names.Load().log }

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
	if fi, err := os.Stat(s.Path()); err == nil {
		return fi.ModTime().UnixMilli()
	}
	return noTimestamp
}

// indexFull says whether either index can take no more entries.
// REQUIRES the segment pinned.
func (s *Segment) indexFull() bool {
	h := s.files()
	return h.offsets.IsFull() || h.times.IsFull()
}

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
// indexes it as Kafka's LogSegment.append does. REQUIRES the writer
// lock and the segment pinned.
func (s *Segment) append(b []byte, h record.BatchHeader) error {
	pos := s.size.Load()
	if _, err := s.files().f.WriteAt(b, pos); err != nil {
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
// REQUIRES the segment pinned.
func (s *Segment) maybeIndex(h record.BatchHeader, pos int64) error {
	if s.bytesSinceIndex > s.cfg.IndexIntervalBytes {
		fh := s.files()
		if err := fh.offsets.Append(h.LastOffset(), pos); err != nil {
			return fmt.Errorf("segment %s: offset index: %w", FilenamePrefix(s.base), err)
		}
		if err := fh.times.MaybeAppend(s.maxTimestamp, s.offsetOfMaxTimestamp, false); err != nil {
			return fmt.Errorf("segment %s: time index: %w", FilenamePrefix(s.base), err)
		}
		s.bytesSinceIndex = 0
	}
	s.bytesSinceIndex += int(h.Size())
	return nil
}

// header reads the batch header at pos.
func (s *Segment) header(fh *handle, pos int64, buf *[record.BatchHeaderSize]byte) (record.BatchHeader, error) {
	if _, err := fh.f.ReadAt(buf[:], pos); err != nil {
		return record.BatchHeader{}, ioErr("read", s.Path(), err)
	}
	return record.ParseHeader(buf[:])
}

// translate finds the first batch at or after startPos whose last offset
// is at least offset, looking no further than limit bytes. It returns
// its position and header, or found=false.
func (s *Segment) translate(fh *handle, offset, startPos, limit int64) (pos int64, h record.BatchHeader, found bool, err error) {
	var buf [record.BatchHeaderSize]byte
	for pos = startPos; pos+record.BatchHeaderSize <= limit; pos += h.Size() {
		if h, err = s.header(fh, pos, &buf); err != nil {
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
func (s *Segment) positionOf(fh *handle, offset int64) (int64, error) {
	size := s.size.Load()
	start := fh.offsets.Lookup(offset).Position
	pos, _, found, err := s.translate(fh, offset, start, size)
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
func (s *Segment) read(fh *handle, offset int64, maxBytes int, maxPosition int64, minOneBatch bool) (pos, n int64, found bool, err error) {
	start := fh.offsets.Lookup(offset).Position
	pos, h, found, err := s.translate(fh, offset, start, maxPosition)
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
	fh, err := s.acquire()
	if err != nil {
		return err
	}
	defer fh.release()
	return ioErr("fsync", s.Path(), fh.f.Sync())
}

// flush makes the segment's log and indexes durable.
func (s *Segment) flush() error {
	fh, err := s.acquire()
	if err != nil {
		return err
	}
	defer fh.release()
	if err := ioErr("fsync", s.Path(), fh.f.Sync()); err != nil {
		return err
	}
	if err := fh.offsets.Flush(); err != nil {
		return fmt.Errorf("segment %s: %w", FilenamePrefix(s.base), err)
	}
	if err := fh.times.Flush(); err != nil {
		return fmt.Errorf("segment %s: %w", FilenamePrefix(s.base), err)
	}
	return s.flushTxnIndex()
}

// seal is Kafka's onBecomeInactiveSegment: a final time-index entry, then
// both indexes trimmed to their entries. REQUIRES the segment pinned.
func (s *Segment) seal() error {
	fh := s.files()
	if err := s.appendMaxTimestamp(fh); err != nil {
		return err
	}
	if err := fh.offsets.TrimToValidSize(); err != nil {
		return fmt.Errorf("segment %s: %w", FilenamePrefix(s.base), err)
	}
	if err := fh.times.TrimToValidSize(); err != nil {
		return fmt.Errorf("segment %s: %w", FilenamePrefix(s.base), err)
	}
	return nil
}

// appendMaxTimestamp gives the time index its final entry, (max
// timestamp, offset of the batch holding it), unless its last entry has
// that timestamp already: Kafka's LogSegment.onBecomeInactiveSegment and
// close, so that a lookup of the largest timestamp finds its batch.
// REQUIRES the writer lock and the segment pinned.
func (s *Segment) appendMaxTimestamp(fh *handle) error {
	if s.maxTimestamp == noTimestamp {
		return nil
	}
	if err := fh.times.MaybeAppend(s.maxTimestamp, s.offsetOfMaxTimestamp, true); err != nil {
		return fmt.Errorf("segment %s: time index: %w", FilenamePrefix(s.base), err)
	}
	return nil
}

// closeActive is what Kafka's LogSegment.close does to the active
// segment before its files close: the final time-index entry, made
// durable. REQUIRES the writer lock and the segment pinned.
func (s *Segment) closeActive() error {
	fh := s.files()
	if fh == nil {
		return nil // closed already
	}
	if err := s.appendMaxTimestamp(fh); err != nil {
		return err
	}
	if err := fh.times.Flush(); err != nil {
		return fmt.Errorf("segment %s: %w", FilenamePrefix(s.base), err)
	}
	return nil
}

// truncateTo removes every batch whose last offset is at least offset
// and returns the number of bytes removed. REQUIRES the writer lock and
// the segment pinned.
func (s *Segment) truncateTo(offset int64) (int64, error) {
	fh := s.files()
	pos, err := s.positionOf(fh, offset)
	if err != nil {
		return 0, err
	}
	old := s.size.Load()
	if pos >= old {
		return 0, nil
	}
	if err := fh.offsets.TruncateTo(offset); err != nil {
		return 0, err
	}
	if err := fh.times.TruncateTo(offset); err != nil {
		return 0, err
	}
	if err := s.truncateTxnIndex(offset); err != nil {
		return 0, err
	}
	if err := fh.f.Truncate(pos); err != nil {
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
// written or recovered). REQUIRES the writer lock and the segment
// pinned.
func (s *Segment) reloadState() error {
	fh := s.files()
	size := s.size.Load()
	s.next.Store(s.base)
	s.maxTimestamp, s.offsetOfMaxTimestamp, s.rollingBase = noTimestamp, s.base, noTimestamp
	if te := fh.times.LastEntry(); te.Timestamp != noTimestamp {
		s.maxTimestamp, s.offsetOfMaxTimestamp = te.Timestamp, te.Offset
	}
	var buf [record.BatchHeaderSize]byte
	if size >= record.BatchHeaderSize {
		h, err := s.header(fh, 0, &buf)
		if err != nil {
			return err
		}
		s.rollingBase = h.MaxTimestamp
	}
	start := int64(0)
	if n := fh.offsets.Entries(); n > 0 {
		start = fh.offsets.Entry(n - 1).Position
	}
	if te := fh.times.LastEntry(); te.Timestamp != noTimestamp {
		start = min(start, fh.offsets.Lookup(te.Offset).Position)
	}
	s.bytesSinceIndex = 0
	for pos := start; pos < size; {
		h, err := s.header(fh, pos, &buf)
		if err != nil {
			return err
		}
		if h.Size() < record.BatchHeaderSize || pos+h.Size() > size {
			return fmt.Errorf("%w: %s at %d: batch of %d bytes overruns the segment (%d bytes)", ErrCorruptLog, s.Path(), pos, h.Size(), size)
		}
		if h.MaxTimestamp > s.maxTimestamp {
			s.maxTimestamp, s.offsetOfMaxTimestamp = h.MaxTimestamp, h.LastOffset()
		}
		if n := fh.offsets.Entries(); n == 0 || pos > fh.offsets.Entry(n-1).Position {
			s.bytesSinceIndex += int(h.Size())
		} else {
			s.bytesSinceIndex = int(h.Size())
		}
		s.next.Store(h.NextOffset())
		pos += h.Size()
	}
	return nil
}

// close trims and closes the segment's files, at once or, when readers
// hold them, when the last one is done. Idempotent.
func (s *Segment) close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	return s.closeFiles()
}

// renameTo gives the segment's three files a new suffix ("" for live
// names, DeletedSuffix, SwapSuffix, ...), open or cold.
func (s *Segment) renameTo(suffix string) error {
	s.openMu.Lock()
	defer s.openMu.Unlock()
	logPath, idxPath, tidxPath := segmentPaths(s.dir, s.base, suffix)
	old := *s.names.Load()
	if err := s.cfg.FS.Rename(old.log, logPath); err != nil {
		return ioErr("rename", old.log, err)
	}
	s.names.Store(&segNames{logPath, idxPath, tidxPath})
	if fh := s.h.Load(); fh != nil {
		if err := fh.offsets.Rename(idxPath); err != nil {
			return err
		}
		if err := fh.times.Rename(tidxPath); err != nil {
			return err
		}
	} else {
		for _, p := range [][2]string{{old.idx, idxPath}, {old.tidx, tidxPath}} {
			if err := os.Rename(p[0], p[1]); err != nil && !errors.Is(err, os.ErrNotExist) {
				return ioErr("rename", p[0], err)
			}
		}
	}
	// The transaction index, like the others, is renamed beside its log.
	if err := os.Rename(txnPath(old.log), txnPath(logPath)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return ioErr("rename", txnPath(old.log), err)
	}
	return nil
}

// remove closes the segment and deletes its files.
func (s *Segment) remove() error {
	name := s.Path()
	err := s.close()
	if e := s.cfg.FS.Remove(name); e != nil && !errors.Is(e, os.ErrNotExist) && err == nil {
		err = ioErr("remove", name, e)
	}
	n := s.names.Load()
	for _, p := range []string{n.idx, n.tidx, txnPath(n.log)} {
		if e := os.Remove(p); e != nil && !errors.Is(e, os.ErrNotExist) && err == nil {
			err = ioErr("remove", p, e)
		}
	}
	return err
}
