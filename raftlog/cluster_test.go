package raftlog

import (
	"fmt"
	"io"
	"log"
	"os"
	"slices"
	"strings"
	"testing"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

// testNode is one raft node over a Storage, with a state machine that
// keeps the normal entries it applied, in order.
type testNode struct {
	id      uint64
	dir     string
	st      *Storage
	rn      *raft.RawNode
	applied []string
	conf    *raftpb.ConfState
	up      bool
}

// cluster passes messages between nodes in memory, in order; messages
// to a node that is down are lost.
type cluster struct {
	t     *testing.T
	nodes map[uint64]*testNode
	queue []*raftpb.Message
}

func newCluster(t *testing.T, ids ...uint64) *cluster {
	c := &cluster{t: t, nodes: map[uint64]*testNode{}}
	for _, id := range ids {
		n := &testNode{id: id, dir: t.TempDir()}
		c.nodes[id] = n
		st, err := Open(n.dir, Options{SegmentBytes: 4096, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		// Bootstrapped as raft's own tests do: the voters in an empty
		// snapshot.
		boot := &raftpb.Snapshot{Metadata: &raftpb.SnapshotMetadata{ConfState: &raftpb.ConfState{Voters: ids}}}
		if err := st.ApplySnapshot(boot); err != nil {
			t.Fatal(err)
		}
		st.Close()
		c.start(id)
	}
	return c
}

// start opens a node's storage from its directory and starts a RawNode
// on it, its state machine rebuilt from the snapshot and the log.
func (c *cluster) start(id uint64) {
	n := c.nodes[id]
	st, err := Open(n.dir, Options{SegmentBytes: 4096, Logger: quiet})
	if err != nil {
		c.t.Fatalf("node %d: open: %v", id, err)
	}
	snap, _ := st.Snapshot()
	n.st, n.applied, n.up = st, restore(snap.GetData()), true
	rn, err := raft.NewRawNode(&raft.Config{
		ID: id, ElectionTick: 10, HeartbeatTick: 1, Storage: st,
		Applied: snap.GetMetadata().GetIndex(), MaxSizePerMsg: 1 << 10,
		MaxInflightMsgs: 16, PreVote: true, CheckQuorum: true,
	})
	if err != nil {
		c.t.Fatalf("node %d: %v", id, err)
	}
	n.rn = rn
}

func (c *cluster) stop(id uint64) {
	n := c.nodes[id]
	n.up = false
	if err := n.st.Close(); err != nil {
		c.t.Fatalf("node %d: close: %v", id, err)
	}
}

func restore(data []byte) []string {
	if len(data) == 0 {
		return nil
	}
	return strings.Split(string(data), "\n")
}

// handleReady is a node's Ready loop step, in the order raft's doc.go
// gives: persist the snapshot, entries and hard state, then send, then
// apply.
func (c *cluster) handleReady(n *testNode) {
	rd := n.rn.Ready()
	if !raft.IsEmptySnap(rd.Snapshot) {
		if err := n.st.ApplySnapshot(rd.Snapshot); err != nil {
			c.t.Fatalf("node %d: apply snapshot: %v", n.id, err)
		}
		n.applied = restore(rd.Snapshot.GetData())
	}
	if err := n.st.Append(rd.Entries); err != nil {
		c.t.Fatalf("node %d: append: %v", n.id, err)
	}
	if !raft.IsEmptyHardState(rd.HardState) {
		if err := n.st.SetHardState(rd.HardState); err != nil {
			c.t.Fatalf("node %d: hard state: %v", n.id, err)
		}
	}
	c.queue = append(c.queue, rd.Messages...)
	for _, e := range rd.CommittedEntries {
		if e.GetType() == raftpb.EntryNormal && len(e.GetData()) > 0 {
			n.applied = append(n.applied, string(e.GetData()))
		}
	}
	n.rn.Advance(rd)
}

// settle runs Ready loops and delivers messages until nothing moves.
func (c *cluster) settle() {
	for range 10000 {
		moved := false
		for _, id := range c.ids() {
			if n := c.nodes[id]; n.up && n.rn.HasReady() {
				c.handleReady(n)
				moved = true
			}
		}
		if len(c.queue) == 0 && !moved {
			return
		}
		q := c.queue
		c.queue = nil
		for _, m := range q {
			c.deliver(m)
		}
	}
	c.t.Fatal("the cluster never settled")
}

func (c *cluster) deliver(m *raftpb.Message) {
	to := c.nodes[m.GetTo()]
	if to == nil || !to.up {
		return
	}
	if err := to.rn.Step(m); err != nil {
		c.t.Fatalf("node %d: step %v: %v", to.id, m.GetType(), err)
	}
	if m.GetType() == raftpb.MsgSnap {
		// Delivered in memory: the snapshot arrived.
		if from := c.nodes[m.GetFrom()]; from.up {
			from.rn.ReportSnapshot(to.id, raft.SnapshotFinish)
		}
	}
}

func (c *cluster) tick(n int) {
	for range n {
		for _, id := range c.ids() {
			if c.nodes[id].up {
				c.nodes[id].rn.Tick()
			}
		}
		c.settle()
	}
}

func (c *cluster) ids() []uint64 {
	var ids []uint64
	for id := range c.nodes {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (c *cluster) leader() *testNode {
	for _, id := range c.ids() {
		if n := c.nodes[id]; n.up && n.rn.BasicStatus().RaftState == raft.StateLeader {
			return n
		}
	}
	c.t.Fatal("no leader")
	return nil
}

// followers returns the two nodes other than l.
func (c *cluster) followers(l *testNode) (uint64, uint64) {
	var out []uint64
	for _, id := range c.ids() {
		if id != l.id {
			out = append(out, id)
		}
	}
	return out[0], out[1]
}

func (c *cluster) propose(from, to int) {
	l := c.leader()
	for i := from; i < to; i++ {
		if err := l.rn.Propose(fmt.Appendf(nil, "op %d", i)); err != nil {
			c.t.Fatalf("propose %d: %v", i, err)
		}
		c.settle()
	}
}

// snapshot has n take a snapshot at its applied index and compact its
// log there, as a state machine does once it applied enough.
func (c *cluster) snapshot(n *testNode) {
	applied := n.rn.BasicStatus().Applied
	data := []byte(strings.Join(n.applied, "\n"))
	if _, err := n.st.CreateSnapshot(applied, nil, data); err != nil {
		c.t.Fatalf("node %d: snapshot at %d: %v", n.id, applied, err)
	}
	if err := n.st.Compact(applied); err != nil {
		c.t.Fatalf("node %d: compact to %d: %v", n.id, applied, err)
	}
}

func want(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("op %d", i))
	}
	return out
}

// TestThreeNodes runs three RawNodes (PreVote and CheckQuorum on) over
// three Storages: a leader is elected, entries are committed, a follower
// is stopped while the leader commits more and compacts its log past
// them, and restarted from its directory it catches up from the
// leader's snapshot; the other follower restarts from its log; then the
// leader fails, a new one is elected, and the old one rejoins. Every
// node applies the same entries, and their logs agree.
// Kafka: KIP-595 (the Raft metadata quorum) and KIP-630 (snapshots).
func TestMain(m *testing.M) {
	raft.SetLogger(&raft.DefaultLogger{Logger: log.New(io.Discard, "", 0)})
	os.Exit(m.Run())
}

func TestThreeNodes(t *testing.T) {
	c := newCluster(t, 1, 2, 3)
	defer func() {
		for _, n := range c.nodes {
			if n.up {
				n.st.Close()
			}
		}
	}()
	c.tick(30) // an election by timeout, PreVote first
	l := c.leader()
	c.propose(0, 20)
	c.tick(3)

	// A follower is down while the leader commits and compacts past it.
	f1, f2 := c.followers(l)
	c.stop(f2)
	c.propose(20, 40)
	c.snapshot(l)
	c.propose(40, 50)
	c.tick(3)
	if first, _ := l.st.FirstIndex(); first <= 22 {
		t.Fatalf("leader's first index %d: the log was not compacted past node %d", first, f2)
	}
	c.stop(f1) // restarts from its directory with the log it has
	c.start(f1)
	c.start(f2) // catches up from the leader's snapshot
	c.tick(30)
	if l2 := c.leader(); l2 != l {
		t.Fatalf("leader changed from %d to %d without a failure", l.id, l2.id)
	}
	c.propose(50, 60)
	c.tick(3)
	if snap, _ := c.nodes[f2].st.Snapshot(); snap.GetMetadata().GetIndex() == 0 {
		t.Errorf("node %d caught up without the leader's snapshot", f2)
	}

	// The leader fails; the others elect a new one in a later term.
	c.stop(l.id)
	c.tick(60)
	l2 := c.leader()
	c.propose(60, 70)
	c.start(l.id)
	c.tick(30)
	if l2.rn.BasicStatus().GetTerm() < 2 {
		t.Errorf("new leader's term %d, want a later term", l2.rn.BasicStatus().GetTerm())
	}

	for _, id := range c.ids() {
		n := c.nodes[id]
		if !slices.Equal(n.applied, want(70)) {
			t.Errorf("node %d applied %d entries %q..., want %d", id, len(n.applied), n.applied[:min(3, len(n.applied))], 70)
		}
	}
	checkLogsAgree(t, c)
	// After a restart of every node, each storage answers as before.
	for _, id := range c.ids() {
		before := c.nodes[id].st
		ms := storedCopy(t, before)
		c.stop(id)
		c.start(id)
		if err := compareStorages(ms, c.nodes[id].st, 1<<30); err != nil {
			t.Errorf("node %d after restart: %v", id, err)
		}
		first, _ := before.FirstIndex()
		last, _ := before.LastIndex()
		for i := first - 1; i <= last; i++ {
			t1, _ := before.Term(i)
			t2, _ := c.nodes[id].st.Term(i)
			if t1 != t2 {
				t.Errorf("node %d: term of %d was %d, %d after restart", id, i, t1, t2)
			}
		}
	}
	checkLogsAgree(t, c)
}

// checkLogsAgree checks that the nodes' stored entries agree wherever
// two logs hold the same index (Log Matching), up to the commit index.
func checkLogsAgree(t *testing.T, c *cluster) {
	t.Helper()
	seen := map[uint64]*raftpb.Entry{}
	for _, id := range c.ids() {
		st := c.nodes[id].st
		first, _ := st.FirstIndex()
		commit := st.HardState().GetCommit()
		if commit < first {
			continue
		}
		es, err := st.Entries(first, commit+1, 1<<30)
		if err != nil {
			t.Fatalf("node %d: entries [%d, %d]: %v", id, first, commit, err)
		}
		for _, e := range es {
			if prev, ok := seen[e.GetIndex()]; ok && !sameEntry(prev, e) {
				t.Errorf("node %d: entry %d is %v, another node has %v", id, e.GetIndex(), e, prev)
			}
			seen[e.GetIndex()] = e
		}
	}
}

// storedCopy returns a MemoryStorage holding what st holds.
func storedCopy(t *testing.T, st *Storage) *raft.MemoryStorage {
	t.Helper()
	ms := raft.NewMemoryStorage()
	snap, _ := st.Snapshot()
	first, _ := st.FirstIndex()
	last, _ := st.LastIndex()
	term, _ := st.Term(first - 1)
	snap.Metadata.Index, snap.Metadata.Term = new(first-1), new(term) // the compaction point
	es, err := st.Entries(first, last+1, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	if err := must(ms.ApplySnapshot(snap), ms.Append(es), ms.SetHardState(st.HardState())); err != nil {
		t.Fatal(err)
	}
	return ms
}
