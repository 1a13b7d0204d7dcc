package raftlog

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/varve/varve/record"
	"github.com/varve/varve/segment"
)

// QuorumStateFile is the file that holds the hard state, named as in
// KRaft's metadata log directory.
const QuorumStateFile = "quorum-state"

// CheckpointSuffix ends a snapshot file's name, as in KRaft.
const CheckpointSuffix = ".checkpoint"

// quorumState is KRaft's quorum-state JSON (QuorumStateData, data_version
// 0) plus commitIndex, which KRaft does not persist and raft's HardState
// does. KRaft's reader ignores fields it does not know.
type quorumState struct {
	ClusterID     string  `json:"clusterId"`
	LeaderID      int64   `json:"leaderId"`
	LeaderEpoch   uint64  `json:"leaderEpoch"`
	VotedID       int64   `json:"votedId"`
	AppliedOffset int64   `json:"appliedOffset"`
	CurrentVoters []voter `json:"currentVoters"`
	DataVersion   int     `json:"data_version"`
	CommitIndex   uint64  `json:"commitIndex"`
}

type voter struct {
	VoterID int64 `json:"voterId"`
}

// encodeHardState renders hs as quorum-state JSON. Raft's "no vote" (0)
// is KRaft's -1.
func encodeHardState(hs *raftpb.HardState) ([]byte, error) {
	if hs.GetVote() > math.MaxInt64 {
		return nil, fmt.Errorf("raftlog: vote %d does not fit quorum-state's votedId", hs.GetVote())
	}
	q := quorumState{LeaderID: -1, LeaderEpoch: hs.GetTerm(), VotedID: -1, CommitIndex: hs.GetCommit()}
	if hs.GetVote() != 0 {
		q.VotedID = int64(hs.GetVote())
	}
	return json.Marshal(q)
}

// readHardState reads the quorum-state file; a missing file is the empty
// hard state of a new node.
func readHardState(fsys segment.FS, dir string) (*raftpb.HardState, error) {
	path := filepath.Join(dir, QuorumStateFile)
	data, err := readFile(fsys, path)
	if errors.Is(err, os.ErrNotExist) {
		return newHardState(0, 0, 0), nil
	}
	if err != nil {
		return nil, fmt.Errorf("raftlog: read %s: %w", path, err)
	}
	var q quorumState
	if err := json.Unmarshal(data, &q); err != nil {
		return nil, fmt.Errorf("raftlog: %s: %w", path, err)
	}
	return newHardState(q.LeaderEpoch, uint64(max(q.VotedID, 0)), q.CommitIndex), nil
}

func newHardState(term, vote, commit uint64) *raftpb.HardState {
	return &raftpb.HardState{Term: new(term), Vote: new(vote), Commit: new(commit)}
}

// checkpointName is KRaft's snapshot file name: the snapshot's end
// offset (exclusive: index+1) in 20 digits, its epoch (term) in 10.
func checkpointName(meta *raftpb.SnapshotMetadata) string {
	return fmt.Sprintf("%020d-%010d%s", meta.GetIndex()+1, meta.GetTerm(), CheckpointSuffix)
}

// parseCheckpointName returns the index and term a checkpoint file name
// stands for.
func parseCheckpointName(name string) (index, term uint64, ok bool) {
	s, found := strings.CutSuffix(name, CheckpointSuffix)
	if !found || len(s) != 31 || s[20] != '-' {
		return 0, 0, false
	}
	var end uint64
	if _, err := fmt.Sscanf(s, "%020d-%010d", &end, &term); err != nil || end == 0 {
		return 0, 0, false
	}
	return end - 1, term, true
}

// Snapshot record keys inside a checkpoint file.
const (
	confStateKey = "raft.confstate"
	dataKey      = "raft.data"
)

// encodeSnapshot renders a snapshot as a checkpoint file: one
// uncompressed RecordBatch, base offset the snapshot's index, partition
// leader epoch its term, holding two records: key raft.confstate with the
// protobuf ConfState, then key raft.data with the state machine's data.
func encodeSnapshot(snap *raftpb.Snapshot, ts int64) ([]byte, error) {
	m := snap.GetMetadata()
	if m.GetTerm() > math.MaxInt32 || m.GetIndex() >= math.MaxInt64 {
		return nil, fmt.Errorf("raftlog: snapshot %d/%d does not fit a Kafka offset and epoch", m.GetIndex(), m.GetTerm())
	}
	cs, err := proto.MarshalOptions{Deterministic: true}.Marshal(raftpb.EnsureConfState(m.GetConfState()))
	if err != nil {
		return nil, fmt.Errorf("raftlog: encode conf state: %w", err)
	}
	data := snap.GetData()
	if data == nil {
		data = []byte{}
	}
	b := record.NewBatchBuilder(record.CompressionNone)
	b.Append(record.Record{Timestamp: ts, Key: []byte(confStateKey), Value: cs})
	b.Append(record.Record{Timestamp: ts, Key: []byte(dataKey), Value: data})
	out, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("raftlog: encode snapshot: %w", err)
	}
	record.SetBaseOffset(out, int64(m.GetIndex()))
	record.SetPartitionLeaderEpoch(out, int32(m.GetTerm()))
	return out, nil
}

// decodeSnapshot reads a checkpoint file back; its batch must agree with
// the index and term of its name.
func decodeSnapshot(buf []byte, index, term uint64) (*raftpb.Snapshot, error) {
	h, err := record.ValidateBatch(buf)
	if err != nil {
		return nil, err
	}
	if h.Size() != int64(len(buf)) || uint64(h.BaseOffset) != index || uint64(h.PartitionLeaderEpoch) != term {
		return nil, fmt.Errorf("batch %d/%d of %d bytes does not match its name: %w", h.BaseOffset, h.PartitionLeaderEpoch, h.Size(), record.ErrCorruptBatch)
	}
	recs, err := record.DecodeBatch(buf, nil)
	if err != nil {
		return nil, err
	}
	if len(recs) != 2 || string(recs[0].Key) != confStateKey || string(recs[1].Key) != dataKey {
		return nil, fmt.Errorf("unexpected records: %w", record.ErrCorruptBatch)
	}
	cs := &raftpb.ConfState{}
	if err := proto.Unmarshal(recs[0].Value, cs); err != nil {
		return nil, err
	}
	snap := &raftpb.Snapshot{Metadata: &raftpb.SnapshotMetadata{Index: new(index), Term: new(term), ConfState: raftpb.EnsureConfState(cs)}}
	if len(recs[1].Value) > 0 {
		snap.Data = append([]byte(nil), recs[1].Value...)
	}
	return snap, nil
}

// listCheckpoints returns the checkpoint files in dir, newest (highest
// index) last.
func listCheckpoints(fsys segment.FS, dir string) ([]string, error) {
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("raftlog: list %s: %w", dir, err)
	}
	var names []string
	for _, e := range ents {
		if _, _, ok := parseCheckpointName(e.Name()); ok {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names) // zero-padded: lexical order is (index, term) order
	return names, nil
}

// readSnapshot loads the newest checkpoint in dir, or the empty snapshot.
func readSnapshot(fsys segment.FS, dir string) (*raftpb.Snapshot, error) {
	names, err := listCheckpoints(fsys, dir)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return raftpb.EnsureSnapshot(nil), nil
	}
	name := names[len(names)-1]
	index, term, _ := parseCheckpointName(name)
	buf, err := readFile(fsys, filepath.Join(dir, name))
	if err != nil {
		return nil, fmt.Errorf("raftlog: read %s: %w", name, err)
	}
	snap, err := decodeSnapshot(buf, index, term)
	if err != nil {
		return nil, fmt.Errorf("raftlog: %s: %w", name, err)
	}
	return snap, nil
}

// removeStaleCheckpoints deletes every checkpoint but keep (the newest)
// and the one at the log start offset, which holds the term of raft's
// dummy entry when the log restarted there (ApplySnapshot): KRaft too
// deletes the snapshots older than its log start offset.
func removeStaleCheckpoints(fsys segment.FS, dir, keep string, logStart uint64) error {
	names, err := listCheckpoints(fsys, dir)
	if err != nil {
		return err
	}
	for _, n := range names {
		if index, _, _ := parseCheckpointName(n); n == keep || index == logStart {
			continue
		}
		if err := fsys.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("raftlog: remove %s: %w", n, err)
		}
	}
	return nil
}

// checkpointTerm returns the term of the checkpoint at index, if any.
func checkpointTerm(fsys segment.FS, dir string, index uint64) (uint64, bool, error) {
	names, err := listCheckpoints(fsys, dir)
	if err != nil {
		return 0, false, err
	}
	for _, n := range names {
		if i, t, _ := parseCheckpointName(n); i == index {
			return t, true, nil
		}
	}
	return 0, false, nil
}

func readFile(fsys segment.FS, path string) ([]byte, error) {
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	n, err := f.Size()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, n)
	if n == 0 {
		return buf, nil
	}
	if _, err := f.ReadAt(buf, 0); err != nil {
		return nil, err
	}
	return buf, nil
}
