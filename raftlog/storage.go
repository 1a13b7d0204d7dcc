package raftlog

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

// ErrCorrupt reports a directory whose files disagree with each other in
// a way no crash of this package's writes can produce.
var ErrCorrupt = errors.New("raftlog: inconsistent raft log directory")

// MaxEntryBytes bounds one entry's batch, as KRaft bounds its batches
// (KafkaRaftClient.MAX_BATCH_SIZE_BYTES, 8 MiB).
const MaxEntryBytes = 8 << 20

// readChunk is how many bytes a read of the log asks for at a time.
const readChunk = 256 << 10

// Options configures Open. The zero value is usable.
type Options struct {
	// FS is the file system; nil means the operating system's. Tests
	// pass a segmenttest.FaultFS.
	FS segment.FS
	// SegmentBytes is segment.bytes of the log; 0 means KRaft's
	// metadata.log.segment.bytes default, 1 GiB.
	SegmentBytes int64
	// Now stamps record timestamps; nil means time.Now.
	Now func() time.Time
	// Logger receives the log's recovery reports; nil means slog.Default().
	Logger *slog.Logger
}

// Storage is etcd raft's Storage over a Varve log, with the writes a
// node's Ready loop makes. Every method is safe for concurrent use; the
// writes return only once what they wrote is durable.
type Storage struct {
	mu   sync.Mutex
	dir  string
	fs   segment.FS
	now  func() time.Time
	log  *segment.Log
	hs   *raftpb.HardState
	snap *raftpb.Snapshot
	// first is the index before the first entry raft may read (raft's
	// dummy entry); it equals the log start offset.
	first uint64
	// terms[k] is the term of index first+k; terms[0] is the dummy's.
	terms []uint64
	// chunk bounds one segment append: appendChunk or segment.bytes.
	chunk int
}

var _ raft.Storage = (*Storage)(nil)

// Open opens (creating if needed) the raft log in dir and recovers it:
// the segment log is recovered by package segment, the newest checkpoint
// is loaded, an ApplySnapshot a crash interrupted is completed, and the
// hard state is checked against the log.
func Open(dir string, o Options) (*Storage, error) {
	s := &Storage{dir: dir, fs: o.FS, now: o.Now}
	if s.fs == nil {
		s.fs = segment.OSFS{}
	}
	if s.now == nil {
		s.now = time.Now
	}
	cfg := segment.DefaultConfig()
	cfg.FS, cfg.Logger, cfg.FlushMessages, cfg.MaxMessageBytes = s.fs, o.Logger, 1, MaxEntryBytes
	if o.SegmentBytes > 0 {
		cfg.SegmentBytes = o.SegmentBytes
	}
	s.chunk = int(min(appendChunk, cfg.SegmentBytes))
	log, err := segment.Open(dir, cfg)
	if err != nil {
		return nil, fmt.Errorf("raftlog: open %s: %w", dir, err)
	}
	s.log = log
	if err := s.load(); err != nil {
		log.Close()
		return nil, err
	}
	return s, nil
}

// load reads the snapshot, hard state and the terms of the log.
func (s *Storage) load() error {
	var err error
	if s.snap, err = readSnapshot(s.fs, s.dir); err != nil {
		return err
	}
	if s.hs, err = readHardState(s.fs, s.dir); err != nil {
		return err
	}
	if err := s.scanTerms(); err != nil {
		return err
	}
	if err := s.finishApplySnapshot(); err != nil {
		return err
	}
	if s.hs.GetCommit() > s.lastIndex() {
		return fmt.Errorf("%w: %s: commit index %d past last index %d", ErrCorrupt, s.dir, s.hs.GetCommit(), s.lastIndex())
	}
	return nil
}

// scanTerms reads every batch header from the log start offset and
// rebuilds first and terms. The dummy's term is the entry at the log
// start offset's, or the checkpoint's when the log restarted there. A
// tail that cannot be raft's (after a gap, or of a lower term than the
// entry before it) is what an interrupted truncation left behind (a
// removed segment whose rename or deletion did not reach the disk): it
// is truncated away.
func (s *Storage) scanTerms() error {
	start, end := s.log.StartOffset(), s.log.EndOffset()
	s.first, s.terms = uint64(start), []uint64{0}
	if start > 0 {
		term, ok, err := checkpointTerm(s.fs, s.dir, s.first)
		switch {
		case err != nil:
			return err
		case ok:
			s.terms[0] = term
		default:
			s.terms = nil // the entry at start must be in the log
		}
	}
	for off := start; off < end; {
		buf, err := s.log.ReadBytes(off, readChunk)
		if err != nil {
			return fmt.Errorf("raftlog: read %s at offset %d: %w", s.dir, off, err)
		}
		if len(buf) == 0 {
			break
		}
		var stale bool
		if off, stale, err = s.scanBatches(buf); err != nil {
			return err
		}
		if stale {
			return s.dropStaleTail()
		}
	}
	if len(s.terms) == 0 {
		return fmt.Errorf("%w: %s: no term for index %d", ErrCorrupt, s.dir, s.first)
	}
	return nil
}

// dropStaleTail truncates the log after the entries scanned so far.
func (s *Storage) dropStaleTail() error {
	at := s.first + uint64(len(s.terms))
	if err := s.log.TruncateTo(int64(at)); err != nil {
		return fmt.Errorf("raftlog: drop stale entries of %s from %d: %w", s.dir, at, err)
	}
	return nil
}

// scanBatches appends the terms of the batches in buf and returns the
// offset after them, or stale when it met a batch that cannot follow.
func (s *Storage) scanBatches(buf []byte) (next int64, stale bool, err error) {
	for p := 0; p < len(buf); {
		h, err := record.ParseHeader(buf[p:])
		if err != nil {
			return 0, false, fmt.Errorf("raftlog: %s at byte %d: %w", s.dir, p, err)
		}
		if stale, err := s.scanBatch(h); stale || err != nil {
			return 0, stale, err
		}
		next = h.NextOffset()
		p += int(h.Size())
	}
	return next, false, nil
}

// scanBatch adds the term of the one-entry batch h.
func (s *Storage) scanBatch(h record.BatchHeader) (stale bool, err error) {
	idx, term := uint64(h.BaseOffset), uint64(h.PartitionLeaderEpoch)
	want := s.first + uint64(len(s.terms))
	if len(s.terms) == 0 {
		want = s.first
	}
	switch {
	case h.LastOffsetDelta != 0:
		return false, fmt.Errorf("%w: %s: batch at %d holds %d entries", ErrCorrupt, s.dir, idx, h.LastOffsetDelta+1)
	case len(s.terms) == 1 && idx == s.first: // the dummy is also in the log
		s.terms[0] = term
	case idx > want && len(s.terms) > 0, idx == want && len(s.terms) > 0 && term < s.terms[len(s.terms)-1]:
		return true, nil
	case idx == want:
		s.terms = append(s.terms, term)
	default:
		return false, fmt.Errorf("%w: %s: entry %d, want %d", ErrCorrupt, s.dir, idx, want)
	}
	return false, nil
}

// finishApplySnapshot completes an ApplySnapshot that a crash cut
// between writing the checkpoint and restarting the log: a snapshot the
// log does not contain (past its end, or a different term at its index)
// replaces the log.
func (s *Storage) finishApplySnapshot() error {
	index, term := s.snap.GetMetadata().GetIndex(), s.snap.GetMetadata().GetTerm()
	if index == 0 || index < s.first {
		return nil
	}
	if index <= s.lastIndex() && s.terms[index-s.first] == term {
		return nil
	}
	return s.restartAt(index, term)
}

// restartAt empties the log and starts it at index, whose term is term.
// REQUIRES mu (or exclusive access).
func (s *Storage) restartAt(index, term uint64) error {
	if err := s.log.TruncateFullyAndStartAt(int64(index)); err != nil {
		return fmt.Errorf("raftlog: restart %s at %d: %w", s.dir, index, err)
	}
	s.first, s.terms = index, []uint64{term}
	return nil
}

func (s *Storage) lastIndex() uint64 { return s.first + uint64(len(s.terms)) - 1 }

// Close closes the log. The Storage must not be used afterwards.
func (s *Storage) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.Close()
}

// Dir is the directory the storage lives in.
func (s *Storage) Dir() string { return s.dir }

// InitialState implements raft.Storage.
func (s *Storage) InitialState() (*raftpb.HardState, *raftpb.ConfState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	hs := proto.Clone(s.hs).(*raftpb.HardState)
	return hs, proto.Clone(s.snap.GetMetadata().GetConfState()).(*raftpb.ConfState), nil
}

// HardState returns the hard state last set.
func (s *Storage) HardState() *raftpb.HardState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return proto.Clone(s.hs).(*raftpb.HardState)
}

// FirstIndex implements raft.Storage.
func (s *Storage) FirstIndex() (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.first + 1, nil
}

// LastIndex implements raft.Storage.
func (s *Storage) LastIndex() (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastIndex(), nil
}

// Term implements raft.Storage.
func (s *Storage) Term(i uint64) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i < s.first {
		return 0, raft.ErrCompacted
	}
	if i > s.lastIndex() {
		return 0, raft.ErrUnavailable
	}
	return s.terms[i-s.first], nil
}

// Snapshot implements raft.Storage.
func (s *Storage) Snapshot() (*raftpb.Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return proto.Clone(s.snap).(*raftpb.Snapshot), nil
}

// Entries implements raft.Storage: the entries in [lo, hi), limited to
// maxSize bytes as raft counts them but at least one.
func (s *Storage) Entries(lo, hi, maxSize uint64) ([]*raftpb.Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if lo <= s.first {
		return nil, raft.ErrCompacted
	}
	if hi > s.lastIndex()+1 {
		return nil, fmt.Errorf("raftlog: entries [%d, %d) out of bound, last index %d", lo, hi, s.lastIndex())
	}
	if len(s.terms) == 1 {
		return nil, raft.ErrUnavailable // only the dummy
	}
	var ents []*raftpb.Entry
	var size uint64
	for off := lo; off < hi; {
		buf, err := s.log.ReadBytes(int64(off), readChunk)
		if err != nil {
			return nil, fmt.Errorf("raftlog: read %s at %d: %w", s.dir, off, err)
		}
		if len(buf) == 0 {
			return nil, fmt.Errorf("%w: %s: entry %d missing from the log", ErrCorrupt, s.dir, off)
		}
		var done bool
		if ents, off, done, err = decodeEntries(ents, buf, lo, hi, maxSize, &size); err != nil {
			return nil, err
		}
		if done {
			break
		}
	}
	return ents, nil
}
