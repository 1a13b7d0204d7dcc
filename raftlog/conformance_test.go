package raftlog

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
	"pgregory.net/rapid"

	"github.com/varve/varve/segment/segmenttest"
)

// model drives a Storage and a raft.MemoryStorage with the same calls,
// within raft's contract: a conflicting suffix is only ever above the
// commit index, and snapshots and compactions are at or below it.
type model struct {
	t      *rapid.T
	dir    string
	fs     *segmenttest.FaultFS
	st     *Storage
	ms     *raft.MemoryStorage
	commit uint64
	term   uint64 // the highest term written so far
}

func newModel(t *rapid.T, dir string) *model {
	fs := segmenttest.NewFaultFS()
	fs.SkipSyncs(true) // the model checks answers; crash_test.go checks durability
	m := &model{t: t, dir: dir, fs: fs, ms: raft.NewMemoryStorage()}
	m.reopen()
	return m
}

func (m *model) reopen() {
	if m.st != nil {
		if err := m.st.Close(); err != nil {
			m.t.Fatalf("close: %v", err)
		}
	}
	st, err := Open(m.dir, Options{FS: m.fs, SegmentBytes: 1024, Logger: quiet})
	if err != nil {
		m.t.Fatalf("open: %v", err)
	}
	m.st = st
}

func (m *model) bounds() (first, last uint64) {
	first, _ = m.ms.FirstIndex()
	last, _ = m.ms.LastIndex()
	return first, last
}

func genEntry(t *rapid.T, index, term uint64) *raftpb.Entry {
	e := &raftpb.Entry{Index: new(index), Term: new(term)}
	if typ := rapid.IntRange(0, 2).Draw(t, "type"); typ > 0 {
		e.Type = raftpb.EntryType(typ).Enum()
	}
	if data := rapid.SliceOfN(rapid.Byte(), 0, 40).Draw(t, "data"); len(data) > 0 {
		e.Data = data
	}
	return e
}

// Kafka: KRaft appends the leader's records and truncates a follower's
// diverging suffix (KIP-595); raft's MemoryStorage.Append is the reference.
func (m *model) appendEntries() {
	first, last := m.bounds()
	from := rapid.Uint64Range(max(first, m.commit+1), last+1).Draw(m.t, "from")
	n := rapid.IntRange(1, 6).Draw(m.t, "n")
	if from <= last || rapid.Bool().Draw(m.t, "newTerm") {
		m.term++
	}
	m.term = max(m.term, 1)
	ents := make([]*raftpb.Entry, n)
	for i := range ents {
		ents[i] = genEntry(m.t, from+uint64(i), m.term)
	}
	m.do("append", m.ms.Append(ents), m.st.Append(ents))
}

func (m *model) setHardState() {
	_, last := m.bounds()
	m.commit = rapid.Uint64Range(m.commit, last).Draw(m.t, "commit")
	hs := newHardState(m.term, rapid.Uint64Range(0, 3).Draw(m.t, "vote"), m.commit)
	m.do("set hard state", m.ms.SetHardState(hs), m.st.SetHardState(hs))
}

func genConfState(t *rapid.T) *raftpb.ConfState {
	if rapid.Bool().Draw(t, "keepConf") {
		return nil
	}
	return &raftpb.ConfState{
		Voters:   rapid.SliceOfNDistinct(rapid.Uint64Range(1, 9), 1, 3, rapid.ID).Draw(t, "voters"),
		Learners: rapid.SliceOfNDistinct(rapid.Uint64Range(10, 12), 0, 2, rapid.ID).Draw(t, "learners"),
	}
}

func (m *model) createSnapshot() {
	first, _ := m.bounds()
	snap, _ := m.ms.Snapshot()
	lo := max(snap.GetMetadata().GetIndex()+1, first-1)
	if lo > m.commit {
		m.t.Skip("nothing committed to snapshot")
	}
	i := rapid.Uint64Range(lo, m.commit).Draw(m.t, "snapshot")
	cs := genConfState(m.t)
	data := rapid.SliceOfN(rapid.Byte(), 1, 64).Draw(m.t, "snapData")
	_, err1 := m.ms.CreateSnapshot(i, cs, data)
	_, err2 := m.st.CreateSnapshot(i, cs, data)
	m.do("create snapshot", err1, err2)
}

// Kafka: KRaft raises the log start offset to the latest snapshot and
// deletes the segments below it (KIP-630).
func (m *model) compact() {
	first, _ := m.bounds()
	if first > m.commit {
		m.t.Skip("nothing committed to compact")
	}
	i := rapid.Uint64Range(first, m.commit).Draw(m.t, "compact")
	m.do("compact", m.ms.Compact(i), m.st.Compact(i))
}

// Kafka: a follower whose log is behind the leader's start fetches a
// snapshot and restarts its log there (KIP-630 FetchSnapshot).
func (m *model) applySnapshot() {
	_, last := m.bounds()
	cur, _ := m.ms.Snapshot()
	i := rapid.Uint64Range(max(cur.GetMetadata().GetIndex(), last)+1, last+20).Draw(m.t, "applyAt")
	m.term++
	cs := genConfState(m.t)
	if cs == nil {
		cs = &raftpb.ConfState{Voters: []uint64{1}}
	}
	snap := &raftpb.Snapshot{Data: []byte("applied"), Metadata: &raftpb.SnapshotMetadata{Index: new(i), Term: new(m.term), ConfState: cs}}
	m.commit = i
	m.do("apply snapshot", m.ms.ApplySnapshot(snap), m.st.ApplySnapshot(snap))
}

func (m *model) do(op string, want, got error) {
	if !errors.Is(got, want) {
		m.t.Fatalf("%s: MemoryStorage says %v, Storage says %v", op, want, got)
	}
}

// check compares every raft.Storage method of the two storages.
func (m *model) check() {
	if err := compareStorages(m.ms, m.st, rapid.Uint64Range(1, 400).Draw(m.t, "maxSize")); err != nil {
		m.t.Fatal(err)
	}
}

func compareStorages(ms raft.Storage, st raft.Storage, maxSize uint64) error {
	f1, _ := ms.FirstIndex()
	f2, _ := st.FirstIndex()
	l1, _ := ms.LastIndex()
	l2, _ := st.LastIndex()
	if f1 != f2 || l1 != l2 {
		return fmt.Errorf("indexes: want [%d, %d], got [%d, %d]", f1, l1, f2, l2)
	}
	if err := compareState(ms, st); err != nil {
		return err
	}
	for i := f1 - min(f1, 2); i <= l1+1; i++ {
		t1, e1 := ms.Term(i)
		t2, e2 := st.Term(i)
		if t1 != t2 || !errors.Is(e2, e1) {
			return fmt.Errorf("Term(%d): want %d %v, got %d %v", i, t1, e1, t2, e2)
		}
	}
	for lo := f1 - min(f1, 1); lo <= l1; lo++ {
		for _, size := range []uint64{0, maxSize, 1 << 30} {
			if err := compareEntries(ms, st, lo, l1+1, size); err != nil {
				return err
			}
		}
	}
	return nil
}

func compareState(ms, st raft.Storage) error {
	h1, c1, _ := ms.InitialState()
	h2, c2, _ := st.InitialState()
	if h1.GetTerm() != h2.GetTerm() || h1.GetVote() != h2.GetVote() || h1.GetCommit() != h2.GetCommit() {
		return fmt.Errorf("hard state: want %v, got %v", h1, h2)
	}
	if !sameConf(c1, c2) {
		return fmt.Errorf("conf state: want %v, got %v", c1, c2)
	}
	s1, _ := ms.Snapshot()
	s2, _ := st.Snapshot()
	m1, m2 := s1.GetMetadata(), s2.GetMetadata()
	if m1.GetIndex() != m2.GetIndex() || m1.GetTerm() != m2.GetTerm() || !bytes.Equal(s1.GetData(), s2.GetData()) || !sameConf(m1.GetConfState(), m2.GetConfState()) {
		return fmt.Errorf("snapshot: want %v, got %v", s1, s2)
	}
	return nil
}

func sameConf(a, b *raftpb.ConfState) bool {
	a = raftpb.EnsureConfState(proto.Clone(raftpb.EnsureConfState(a)).(*raftpb.ConfState))
	b = raftpb.EnsureConfState(proto.Clone(raftpb.EnsureConfState(b)).(*raftpb.ConfState))
	return proto.Equal(a, b)
}

func compareEntries(ms, st raft.Storage, lo, hi, size uint64) error {
	e1, err1 := ms.Entries(lo, hi, size)
	e2, err2 := st.Entries(lo, hi, size)
	if !errors.Is(err2, err1) || len(e1) != len(e2) {
		return fmt.Errorf("Entries(%d, %d, %d): want %d entries %v, got %d %v", lo, hi, size, len(e1), err1, len(e2), err2)
	}
	for i := range e1 {
		if !sameEntry(e1[i], e2[i]) {
			return fmt.Errorf("Entries(%d, %d, %d)[%d]: want %v, got %v", lo, hi, size, i, e1[i], e2[i])
		}
	}
	return nil
}

func sameEntry(a, b *raftpb.Entry) bool {
	return a.GetIndex() == b.GetIndex() && a.GetTerm() == b.GetTerm() && a.GetType() == b.GetType() && bytes.Equal(a.GetData(), b.GetData())
}

// TestConformance runs random sequences of writes against Storage and
// raft's MemoryStorage and compares every Storage method after each step
// and after reopening from the directory.
func TestConformance(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		m := newModel(rt, t.TempDir())
		defer func() { m.st.Close() }()
		rt.Repeat(map[string]func(*rapid.T){
			"append":         func(*rapid.T) { m.appendEntries() },
			"setHardState":   func(*rapid.T) { m.setHardState() },
			"createSnapshot": func(*rapid.T) { m.createSnapshot() },
			"compact":        func(*rapid.T) { m.compact() },
			"applySnapshot":  func(*rapid.T) { m.applySnapshot() },
			"reopen":         func(*rapid.T) { m.reopen() },
			"":               func(*rapid.T) { m.check() },
		})
	})
}
