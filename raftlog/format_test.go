package raftlog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/varve/varve/record"
)

// Kafka: KRaft's quorum-state file is QuorumStateData JSON, data_version 0;
// votedId -1 means no vote.
func TestQuorumStateFormat(t *testing.T) {
	dir := t.TempDir()
	st, err := Open(dir, Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, c := range []struct {
		hs   *raftpb.HardState
		want string
	}{
		{newHardState(7, 2, 0), `{"clusterId":"","leaderId":-1,"leaderEpoch":7,"votedId":2,"appliedOffset":0,"currentVoters":null,"data_version":0,"commitIndex":0}`},
		{newHardState(8, 0, 0), `{"clusterId":"","leaderId":-1,"leaderEpoch":8,"votedId":-1,"appliedOffset":0,"currentVoters":null,"data_version":0,"commitIndex":0}`},
	} {
		if err := st.SetHardState(c.hs); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dir, QuorumStateFile))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want {
			t.Errorf("quorum-state\n got %s\nwant %s", got, c.want)
		}
	}
}

// Kafka: KIP-630 names a snapshot <endOffset:20 digits>-<epoch:10 digits>.checkpoint,
// the end offset exclusive.
func TestCheckpointName(t *testing.T) {
	m := &raftpb.SnapshotMetadata{Index: new(uint64(99)), Term: new(uint64(4))}
	name := checkpointName(m)
	if name != "00000000000000000100-0000000004.checkpoint" {
		t.Fatalf("name %q", name)
	}
	if i, term, ok := parseCheckpointName(name); !ok || i != 99 || term != 4 {
		t.Fatalf("parse %q: %d %d %v", name, i, term, ok)
	}
	for _, bad := range []string{"00000000000000000100-4.checkpoint", "00000000000000000000-0000000004.checkpoint", "x0000000000000000100-0000000004.checkpoint", "00000000000000000100-0000000004.snapshot"} {
		if _, _, ok := parseCheckpointName(bad); ok {
			t.Errorf("%q parsed as a checkpoint", bad)
		}
	}
}

// Kafka: each entry is one RecordBatch v2 whose base offset is the index
// and whose partition leader epoch is the term (KIP-595 stamps the
// leader's epoch on every batch).
func TestEntryBatchLayout(t *testing.T) {
	e := &raftpb.Entry{Index: new(uint64(42)), Term: new(uint64(3)), Type: raftpb.EntryConfChangeV2.Enum(), Data: []byte("cc")}
	b, err := encodeEntry(nil, e, 1000)
	if err != nil {
		t.Fatal(err)
	}
	h, err := record.ValidateBatch(b)
	if err != nil {
		t.Fatal(err)
	}
	if h.BaseOffset != 42 || h.PartitionLeaderEpoch != 3 || h.LastOffsetDelta != 0 || h.Attributes != 0 || h.ProducerID != -1 {
		t.Fatalf("header %+v", h)
	}
	recs, err := record.DecodeBatch(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := recs[0]
	if len(recs) != 1 || r.Key != nil || string(r.Value) != "cc" || len(r.Headers) != 1 || r.Headers[0].Key != EntryTypeHeader || string(r.Headers[0].Value) != "2" {
		t.Fatalf("record %+v", r)
	}
	got, err := entryOf(h, r)
	if err != nil || !sameEntry(got, e) || got.Type == nil {
		t.Fatalf("decoded %v %v", got, err)
	}
}

// A term past a partition leader epoch's int32, or entries that are not
// consecutive, are refused before anything is truncated or written.
func TestAppendRejects(t *testing.T) {
	st, err := Open(t.TempDir(), Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	big := []*raftpb.Entry{{Index: new(uint64(1)), Term: new(uint64(1) << 31)}}
	if err := st.Append(big); err == nil || !strings.Contains(err.Error(), "int32") {
		t.Errorf("term 2^31: %v", err)
	}
	gap := append(ents(1, 2, 1), ents(4, 4, 1)...)
	if err := st.Append(gap); err == nil {
		t.Error("entries 1, 2, 4 accepted")
	}
	down := append(ents(1, 2, 2), ents(3, 3, 1)...)
	if err := st.Append(down); err == nil {
		t.Error("a decreasing term accepted")
	}
	if last, _ := st.LastIndex(); last != 0 {
		t.Errorf("last index %d after refused appends", last)
	}
	// An overwrite that cannot be written leaves the log as it was.
	if err := st.Append(ents(1, 3, 1)); err != nil {
		t.Fatal(err)
	}
	over := []*raftpb.Entry{{Index: new(uint64(2)), Term: new(uint64(1) << 31)}}
	if err := st.Append(over); err == nil {
		t.Error("overwrite with term 2^31 accepted")
	}
	if last, _ := st.LastIndex(); last != 3 {
		t.Errorf("last index %d after a refused overwrite, want 3", last)
	}
	if err := st.Append(ents(5, 6, 1)); err == nil {
		t.Error("an append past the last index + 1 accepted")
	}
}

// A bad entry-type header is reported, not turned into an entry.
func TestBadEntryTypeHeader(t *testing.T) {
	h := record.BatchHeader{PartitionLeaderEpoch: 1}
	for _, v := range []string{"9", "x", ""} {
		r := record.Record{Offset: 5, Headers: []record.Header{{Key: EntryTypeHeader, Value: []byte(v)}}}
		if _, err := entryOf(h, r); err == nil {
			t.Errorf("header %q accepted", v)
		}
	}
}
