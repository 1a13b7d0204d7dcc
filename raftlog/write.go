package raftlog

import (
	"fmt"
	"math"
	"path/filepath"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/varve/varve/segment"
)

// appendChunk bounds the bytes handed to one segment append.
const appendChunk = 1 << 20

// Append stores entries, which must be contiguous, as raft's
// MemoryStorage.Append does: entries at or below the compaction point
// are skipped, and an entry whose index is at or below the last index
// truncates the log there first (the conflicting suffix is overwritten).
// The entries are fsynced when Append returns.
func (s *Storage) Append(entries []*raftpb.Entry) error {
	if len(entries) == 0 {
		return nil
	}
	if err := checkContiguous(entries); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	first := s.first + 1
	last := entries[0].GetIndex() + uint64(len(entries)) - 1
	if last < first {
		return nil
	}
	if first > entries[0].GetIndex() {
		entries = entries[first-entries[0].GetIndex():]
	}
	at := entries[0].GetIndex() - s.first
	switch {
	case uint64(len(s.terms)) > at:
		if err := s.log.TruncateTo(int64(entries[0].GetIndex())); err != nil {
			return fmt.Errorf("raftlog: truncate %s at %d: %w", s.dir, entries[0].GetIndex(), err)
		}
		s.terms = s.terms[:at]
	case uint64(len(s.terms)) < at:
		return fmt.Errorf("raftlog: missing log entry [last: %d, append at: %d]", s.lastIndex(), entries[0].GetIndex())
	}
	return s.appendEntries(entries)
}

// checkContiguous rejects, before anything is truncated or written,
// entries whose index or term a batch cannot hold, and entries whose
// indexes are not consecutive or whose terms decrease: the log would hold
// a gap that Open takes for the leftovers of an interrupted truncation.
func checkContiguous(entries []*raftpb.Entry) error {
	if last := entries[len(entries)-1]; last.GetTerm() > math.MaxInt32 || last.GetIndex() >= math.MaxInt64 {
		return fmt.Errorf("raftlog: entry %d/%d does not fit a Kafka offset and partition leader epoch (int32)", last.GetIndex(), last.GetTerm())
	}
	for i := 1; i < len(entries); i++ {
		prev, e := entries[i-1], entries[i]
		if e.GetIndex() != prev.GetIndex()+1 || e.GetTerm() < prev.GetTerm() {
			return fmt.Errorf("raftlog: entry %d/%d cannot follow %d/%d", e.GetIndex(), e.GetTerm(), prev.GetIndex(), prev.GetTerm())
		}
	}
	return nil
}

// appendEntries writes entries, one batch each, past the log's end, in
// appends of at most s.chunk bytes (a segment append must fit a
// segment). REQUIRES mu.
func (s *Storage) appendEntries(entries []*raftpb.Entry) error {
	ts := s.now().UnixMilli()
	var buf []byte
	from := 0
	for i, e := range entries {
		mark := len(buf)
		var err error
		if buf, err = encodeEntry(buf, e, ts); err != nil {
			return err
		}
		if len(buf) > s.chunk && mark > 0 { // write what came before e
			if err := s.appendBatches(buf[:mark], entries[from:i]); err != nil {
				return err
			}
			buf, from = append(buf[:0], buf[mark:]...), i
		}
	}
	return s.appendBatches(buf, entries[from:])
}

// appendBatches appends the encoded batches of entries. REQUIRES mu.
func (s *Storage) appendBatches(buf []byte, entries []*raftpb.Entry) error {
	if _, err := s.log.AppendReplicated(buf); err != nil {
		return fmt.Errorf("raftlog: append %s entries %d-%d: %w", s.dir, entries[0].GetIndex(), entries[len(entries)-1].GetIndex(), err)
	}
	for _, e := range entries {
		s.terms = append(s.terms, e.GetTerm())
	}
	return nil
}

// SetHardState replaces the quorum-state file with hs (write temp, fsync,
// rename, fsync directory): durable when it returns.
func (s *Storage) SetHardState(hs *raftpb.HardState) error {
	data, err := encodeHardState(hs)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := segment.WriteFileAtomic(s.fs, filepath.Join(s.dir, QuorumStateFile), data); err != nil {
		return fmt.Errorf("raftlog: write hard state: %w", err)
	}
	s.hs = newHardState(hs.GetTerm(), hs.GetVote(), hs.GetCommit())
	return nil
}

// CreateSnapshot records a snapshot of the state machine at index i
// (which must be in the log), with conf state cs (nil keeps the last
// snapshot's) and data, in a checkpoint file; older checkpoints are then
// removed. The log is left as it is: Compact trims it.
func (s *Storage) CreateSnapshot(i uint64, cs *raftpb.ConfState, data []byte) (*raftpb.Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i <= s.snap.GetMetadata().GetIndex() {
		return nil, raft.ErrSnapOutOfDate
	}
	if i < s.first || i > s.lastIndex() {
		return nil, fmt.Errorf("raftlog: snapshot %d is out of bound [%d, %d]", i, s.first, s.lastIndex())
	}
	snap := proto.Clone(s.snap).(*raftpb.Snapshot)
	snap.Metadata.Index, snap.Metadata.Term = new(i), new(s.terms[i-s.first])
	if cs != nil {
		snap.Metadata.ConfState = raftpb.EnsureConfState(proto.Clone(cs).(*raftpb.ConfState))
	}
	snap.Data = data
	if err := s.writeSnapshot(snap); err != nil {
		return nil, err
	}
	if err := s.removeStale(); err != nil {
		return nil, err
	}
	return proto.Clone(snap).(*raftpb.Snapshot), nil
}

// ApplySnapshot replaces the storage's contents with snap, as a follower
// does with a snapshot from its leader: the checkpoint is written, then
// the log restarts, empty, at the snapshot's index. A crash between the
// two is completed by Open.
func (s *Storage) ApplySnapshot(snap *raftpb.Snapshot) error {
	snap = raftpb.EnsureSnapshot(proto.Clone(snap).(*raftpb.Snapshot))
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, index := s.snap.GetMetadata().GetIndex(), snap.GetMetadata().GetIndex()
	if cur != 0 && cur >= index {
		return raft.ErrSnapOutOfDate
	}
	if err := s.writeSnapshot(snap); err != nil {
		return err
	}
	if err := s.restartAt(index, snap.GetMetadata().GetTerm()); err != nil {
		return err
	}
	return s.removeStale()
}

// writeSnapshot makes snap the newest checkpoint, durably. REQUIRES mu.
func (s *Storage) writeSnapshot(snap *raftpb.Snapshot) error {
	data, err := encodeSnapshot(snap, s.now().UnixMilli())
	if err != nil {
		return err
	}
	name := checkpointName(snap.GetMetadata())
	if err := segment.WriteFileAtomic(s.fs, filepath.Join(s.dir, name), data); err != nil {
		return fmt.Errorf("raftlog: write snapshot: %w", err)
	}
	s.snap = snap
	return nil
}

// removeStale removes the checkpoints neither the newest nor at the log
// start offset. A crash before the removal leaves checkpoints that Open
// ignores and a later call removes. REQUIRES mu.
func (s *Storage) removeStale() error {
	return removeStaleCheckpoints(s.fs, s.dir, checkpointName(s.snap.GetMetadata()), s.first)
}

// Compact discards the entries before index i: the log start offset
// becomes i (the entry at i stays, as raft's dummy entry, for its term),
// and segments wholly below it are deleted.
func (s *Storage) Compact(i uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i <= s.first {
		return raft.ErrCompacted
	}
	if i > s.lastIndex() {
		return fmt.Errorf("raftlog: compact %d is out of bound, last index %d", i, s.lastIndex())
	}
	if err := s.log.SetStartOffset(int64(i)); err != nil {
		return fmt.Errorf("raftlog: compact %s to %d: %w", s.dir, i, err)
	}
	s.terms = append([]uint64(nil), s.terms[i-s.first:]...)
	s.first = i
	if _, err := s.log.DeleteSegmentsBefore(int64(i)); err != nil {
		return fmt.Errorf("raftlog: delete segments of %s below %d: %w", s.dir, i, err)
	}
	return s.removeStale()
}
