package quorum

import (
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/varve/varve/controller"
	"github.com/varve/varve/metadata"
)

// entryAt is a normal raft entry at index holding data.
func entryAt(index uint64, data []byte) *raftpb.Entry {
	return &raftpb.Entry{Index: new(index), Term: new(uint64(1)), Data: data}
}

// Kafka: KIP-868. The records between BeginTransactionRecord and
// EndTransactionRecord apply together at the End (the metadata offset
// moves by their count then, the framing records not counted) and not
// at all after an AbortTransactionRecord; a record outside a transaction
// applies at once; no snapshot is taken inside a transaction.
func TestTxnApply(t *testing.T) {
	n := &Node{log: testLogger()}
	n.img = metadata.New("c")
	n.cfg.SnapshotBytes = 1
	index := uint64(0)
	apply := func(data []byte) (uint64, bool) {
		index++
		id, changed := n.applyNormal(entryAt(index, data))
		n.applied = index
		return id, changed
	}

	change := encodeEntries(7, []metadata.Record{metadata.TopicRecord{Name: "a", TopicID: metadata.TopicID{1}},
		metadata.ConfigRecord{ResourceType: metadata.ConfigResourceTopic, ResourceName: "a", Name: "retention.ms", Value: new("1")}})
	for i, d := range change[:len(change)-1] {
		if id, changed := apply(d); id != 0 || changed || n.offset.Load() != 0 {
			t.Fatalf("entry %d of the change: id %d changed %v offset %d", i, id, changed, n.offset.Load())
		}
		n.maybeSnapshot() // would fail on the nil storage if it tried
	}
	if _, ok := n.img.Topic("a"); ok || n.txn == nil {
		t.Fatal("a record inside an open transaction applied")
	}
	if id, changed := apply(change[len(change)-1]); id != 7 || !changed || n.offset.Load() != 2 || n.txn != nil {
		t.Fatalf("End: id %d changed %v offset %d", id, changed, n.offset.Load())
	}
	if tp, ok := n.img.Topic("a"); !ok || tp.Configs["retention.ms"] != "1" {
		t.Fatalf("after the End: %+v %v", tp, ok)
	}

	// Aborted: nothing applies, the offset stays.
	apply(metadata.AppendRecord(nil, metadata.BeginTransactionRecord{}))
	apply(metadata.AppendRecord(nil, metadata.TopicRecord{Name: "b", TopicID: metadata.TopicID{2}}))
	apply(metadata.AppendRecord(nil, metadata.AbortTransactionRecord{Reason: "test"}))
	if _, ok := n.img.Topic("b"); ok || n.offset.Load() != 2 || n.txn != nil {
		t.Fatalf("an aborted record applied, offset %d", n.offset.Load())
	}

	// One record alone applies at once.
	if _, changed := apply(metadata.AppendRecord(nil, metadata.RemoveTopicRecord{TopicID: metadata.TopicID{1}})); !changed || n.offset.Load() != 3 {
		t.Fatalf("a lone record: changed %v offset %d", changed, n.offset.Load())
	}
}

// onLoop runs f on n's raft loop and waits for it.
func onLoop(t *testing.T, n *Node, f func()) {
	t.Helper()
	done := make(chan struct{})
	n.submit(&op{local: true, run: func(*controller.Controller, int64) ([]metadata.Record, error) {
		f()
		close(done)
		return nil, nil
	}})
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the loop did not run the function")
	}
}

// Kafka: KIP-868, QuorumController's failover: a new active controller
// whose committed log ends inside a transaction appends an
// AbortTransactionRecord before anything else; the transaction's
// records never apply, and the changes after it do.
func TestAbortOnTakeover(t *testing.T) {
	c := newTestCluster(t, 20<<20)
	leader := c.active(5 * time.Second)
	c.waitUnfenced(10 * time.Second)
	half := [][]byte{metadata.AppendRecord(nil, metadata.BeginTransactionRecord{Name: "half"}),
		metadata.AppendRecord(nil, metadata.TopicRecord{Name: "half", TopicID: metadata.TopicID{9}})}
	onLoop(t, c.nodes[leader], func() {
		if err := c.nodes[leader].proposeEntries(half); err != nil {
			t.Errorf("propose: %v", err)
		}
	})
	// Committed: every follower has applied the Begin.
	c.waitFor(5*time.Second, "the open transaction on the followers", func() bool {
		open := true
		for i, n := range c.nodes {
			if i != leader {
				onLoop(t, n, func() { open = open && n.txn != nil })
			}
		}
		return open
	})
	c.kill(leader)
	next := c.active(10 * testElectionMs * time.Millisecond)
	createTopic(t, c.nodes[next].Client(), "after", 1, 2)
	c.waitSameImages(5 * time.Second)
	aborts := 0
	onLoop(t, c.nodes[next], func() {
		n := c.nodes[next]
		first, _ := n.st.FirstIndex()
		last, _ := n.st.LastIndex()
		ents, err := n.st.Entries(first, last+1, 1<<30)
		if err != nil {
			t.Errorf("entries: %v", err)
		}
		for _, e := range ents {
			if e.GetType() != raftpb.EntryNormal || len(e.GetData()) == 0 {
				continue
			}
			if _, rec, err := parseEntry(e.GetData()); err == nil {
				if _, ok := rec.(metadata.AbortTransactionRecord); ok {
					aborts++
				}
			}
		}
		if n.txn != nil {
			t.Error("the transaction is still open")
		}
	})
	if aborts != 1 {
		t.Fatalf("%d AbortTransactionRecords in the log, want 1", aborts)
	}
	for _, n := range c.nodes {
		if n == nil {
			continue
		}
		img := n.Publisher().Image()
		if _, ok := img.Topic("half"); ok {
			t.Fatal("the aborted transaction's topic exists")
		}
		if _, ok := img.Topic("after"); !ok {
			t.Fatal("the topic created after the abort is missing")
		}
	}
}
