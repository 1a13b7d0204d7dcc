package segment

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
)

// A transaction index, <base:%020d>.txnindex beside its segment, is
// Kafka's TransactionIndex: one entry per aborted transaction whose ABORT
// marker the segment holds, in the order the markers were written (so by
// increasing LastOffset). A read_committed fetch returns the entries that
// overlap the fetched range so that the consumer drops the aborted
// records (KIP-98). The file exists only once a transaction aborted in
// the segment. All integers are big-endian; version 0 is the only one.
//
//	pos  size  field
//	  0     2  Version           0
//	  2     8  ProducerId
//	 10     8  FirstOffset       the transaction's first offset in this partition
//	 18     8  LastOffset        the offset of its ABORT marker
//	 26     8  LastStableOffset  the partition's last stable offset once the marker was written
//
// These constants are part of Kafka's on-disk format and must not change.
const (
	TxnIndexSuffix = ".txnindex" // LogFileUtils.TXN_INDEX_FILE_SUFFIX

	txnIndexVersion   = 0
	txnIndexEntrySize = 34
)

// AbortedTxn is one entry of a transaction index.
type AbortedTxn struct {
	ProducerID       int64
	FirstOffset      int64
	LastOffset       int64
	LastStableOffset int64
}

func (a AbortedTxn) appendTo(b []byte) []byte {
	b = binary.BigEndian.AppendUint16(b, txnIndexVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(a.ProducerID))
	b = binary.BigEndian.AppendUint64(b, uint64(a.FirstOffset))
	b = binary.BigEndian.AppendUint64(b, uint64(a.LastOffset))
	return binary.BigEndian.AppendUint64(b, uint64(a.LastStableOffset))
}

// ErrCorruptTxnIndex: a .txnindex file is not whole 34-byte entries of
// version 0 in increasing LastOffset order.
var ErrCorruptTxnIndex = errors.New("corrupt transaction index")

// DecodeTxnIndex decodes the content of a .txnindex file. On a corrupt
// file it returns the entries before the first bad one and an error
// wrapping ErrCorruptTxnIndex.
func DecodeTxnIndex(b []byte) ([]AbortedTxn, error) {
	out := make([]AbortedTxn, 0, len(b)/txnIndexEntrySize)
	for p := 0; p+txnIndexEntrySize <= len(b); p += txnIndexEntrySize {
		e := b[p:]
		if v := int16(binary.BigEndian.Uint16(e)); v != txnIndexVersion {
			return out, fmt.Errorf("%w: entry %d has version %d", ErrCorruptTxnIndex, len(out), v)
		}
		a := AbortedTxn{
			ProducerID:       int64(binary.BigEndian.Uint64(e[2:])),
			FirstOffset:      int64(binary.BigEndian.Uint64(e[10:])),
			LastOffset:       int64(binary.BigEndian.Uint64(e[18:])),
			LastStableOffset: int64(binary.BigEndian.Uint64(e[26:])),
		}
		if n := len(out); n > 0 && a.LastOffset < out[n-1].LastOffset {
			return out, fmt.Errorf("%w: entry %d ends at %d, before the previous entry's %d", ErrCorruptTxnIndex, n, a.LastOffset, out[n-1].LastOffset)
		}
		out = append(out, a)
	}
	if len(b)%txnIndexEntrySize != 0 {
		return out, fmt.Errorf("%w: %d bytes are not whole %d-byte entries", ErrCorruptTxnIndex, len(b), txnIndexEntrySize)
	}
	return out, nil
}

// txnIndex is a segment's aborted transactions, in memory and in its
// file. Entries are appended by the log's writer only; readers load the
// published slice, whose elements are never changed once published.
type txnIndex struct {
	entries atomic.Pointer[[]AbortedTxn]
	dirty   atomic.Bool // entries written since the file was last fsynced
}

func (t *txnIndex) list() []AbortedTxn {
	if p := t.entries.Load(); p != nil {
		return *p
	}
	return nil
}

// txnPath is the .txnindex path beside a segment's .log path, with the
// same suffix (".cleaned", ".swap", ".deleted" or none).
func txnPath(logPath string) string {
	i := strings.LastIndex(logPath, LogSuffix)
	return logPath[:i] + TxnIndexSuffix + logPath[i+len(LogSuffix):]
}

// loadTxnIndex reads the segment's .txnindex, if any. A corrupt file
// keeps its valid prefix, which is written back; it returns whether the
// file was corrupt, so that recovery can rebuild it from the log.
func (s *Segment) loadTxnIndex() (corrupt bool, err error) {
	path := txnPath(s.Path())
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		s.txn.entries.Store(nil)
		return false, nil
	}
	if err != nil {
		return false, ioErr("read", path, err)
	}
	entries, derr := DecodeTxnIndex(b)
	s.txn.entries.Store(&entries)
	if derr == nil {
		return false, nil
	}
	s.cfg.Logger.Warn("truncating corrupt transaction index", "file", path, "err", derr)
	return true, s.rewriteTxnIndex(entries)
}

// appendAbortedTxn is Kafka's LogSegment.updateTxnIndex for an aborted
// transaction. An entry that does not end after the last one is already
// there (a replay of the log over an index that survived) and is
// skipped. REQUIRES the log's writer lock.
func (s *Segment) appendAbortedTxn(a AbortedTxn) error {
	old := s.txn.list()
	if n := len(old); n > 0 && a.LastOffset <= old[n-1].LastOffset {
		return nil
	}
	path := txnPath(s.Path())
	f, err := s.cfg.FS.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return ioErr("open", path, err)
	}
	_, werr := f.WriteAt(a.appendTo(nil), int64(len(old))*txnIndexEntrySize)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		return ioErr("append", path, err)
	}
	next := append(old, a) // readers hold old's length: the new element is not theirs
	s.txn.entries.Store(&next)
	s.txn.dirty.Store(true)
	return nil
}

// truncateTxnIndex drops the entries whose marker is at or after offset
// (Kafka's TransactionIndex.truncateTo). REQUIRES the log's writer lock.
func (s *Segment) truncateTxnIndex(offset int64) error {
	old := s.txn.list()
	n := len(old)
	for n > 0 && old[n-1].LastOffset >= offset {
		n--
	}
	if n == len(old) {
		return nil
	}
	return s.rewriteTxnIndex(old[:n:n])
}

// rewriteTxnIndex makes the file hold exactly entries; no file when
// there are none. REQUIRES the log's writer lock (or exclusive use).
func (s *Segment) rewriteTxnIndex(entries []AbortedTxn) error {
	s.txn.entries.Store(&entries)
	path := txnPath(s.Path())
	if len(entries) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return ioErr("remove", path, err)
		}
		return nil
	}
	f, err := s.cfg.FS.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return ioErr("open", path, err)
	}
	b := make([]byte, 0, len(entries)*txnIndexEntrySize)
	for _, a := range entries {
		b = a.appendTo(b)
	}
	_, werr := f.WriteAt(b, 0)
	terr := f.Truncate(int64(len(b)))
	cerr := f.Close()
	if err := errors.Join(werr, terr, cerr); err != nil {
		return ioErr("rewrite", path, err)
	}
	s.txn.dirty.Store(true)
	return nil
}

// flushTxnIndex fsyncs the .txnindex when entries were written since the
// last time.
func (s *Segment) flushTxnIndex() error {
	if !s.txn.dirty.Swap(false) {
		return nil
	}
	path := txnPath(s.Path())
	f, err := s.cfg.FS.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil // emptied since
	}
	if err != nil {
		s.txn.dirty.Store(true)
		return ioErr("open", path, err)
	}
	serr := f.Sync()
	if err := errors.Join(serr, f.Close()); err != nil {
		s.txn.dirty.Store(true)
		return ioErr("fsync", path, err)
	}
	return nil
}

// collectAbortedTxns is Kafka's TransactionIndex.collectAbortedTxns: the
// entries of transactions that overlap [from, upTo), and whether no later
// segment can hold more (an entry's last stable offset reached upTo: any
// transaction aborted later began at or after it).
func (s *Segment) collectAbortedTxns(from, upTo int64, out []AbortedTxn) ([]AbortedTxn, bool) {
	for _, a := range s.txn.list() {
		if a.LastOffset >= from && a.FirstOffset < upTo {
			out = append(out, a)
		}
		if a.LastStableOffset >= upTo {
			return out, true
		}
	}
	return out, false
}

// AbortedTransactions returns the aborted transactions with data in
// [from, upTo), oldest marker first: what a read_committed fetch of that
// range returns so that the consumer drops their records (Kafka's
// UnifiedLog.collectAbortedTransactions). Safe for concurrent use.
func (l *Log) AbortedTransactions(from, upTo int64) []AbortedTxn {
	segs := *l.segs.Load()
	var out []AbortedTxn
	for i := floorSegment(segs, from); i < len(segs); i++ {
		var done bool
		if out, done = segs[i].collectAbortedTxns(from, upTo, out); done {
			break
		}
	}
	return out
}

// SegmentTxnIndex returns the transaction index entries of the segment
// at base, for tools and tests.
func (l *Log) SegmentTxnIndex(base int64) []AbortedTxn {
	segs := *l.segs.Load()
	i := floorSegment(segs, base)
	if len(segs) == 0 || segs[i].base != base {
		return nil
	}
	return segs[i].txn.list()
}
