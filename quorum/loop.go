package quorum

import (
	"fmt"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/varve/varve/metadata"
)

// run is the raft loop: the one goroutine that owns the RawNode, the
// image being built and the active controller. Each event (a tick, a
// message, a delivery report, a controller request) is handed to raft,
// then every Ready is handled before the next event.
func (n *Node) run() {
	defer close(n.done)
	ticker := time.NewTicker(n.cfg.tick())
	defer ticker.Stop()
	for {
		select {
		case <-n.stopc:
			n.dropController(ErrStopped)
			return
		case <-ticker.C:
			n.rn.Tick()
			n.tickController()
			n.tickLearners()
		case m := <-n.recvc:
			n.rn.Step(m) // an error is a message raft ignores (a stale term, a local type)
		case r := <-n.reportc:
			n.applyReport(r)
		case o := <-n.opc:
			n.runOp(o)
			n.runQueuedOps()
		}
		if err := n.drain(); err != nil {
			n.fail(err)
			n.dropController(ErrStopped)
			<-n.stopc
			return
		}
	}
}

// maxOpsPerReady bounds the controller requests whose entries one
// Ready carries (runQueuedOps).
const maxOpsPerReady = 64

// runQueuedOps runs the requests already waiting, up to
// maxOpsPerReady, before the next Ready: their entries are proposed
// together and written with one fsync of the log (and sent to the
// followers in the same messages), so that the metadata commit rate
// grows with concurrent requests instead of paying a write and a round
// trip each. Each request still has its own entry and its own answer,
// and the controller sees them one after another, as before.
func (n *Node) runQueuedOps() {
	for range maxOpsPerReady - 1 {
		select {
		case o := <-n.opc:
			n.runOp(o)
		default:
			return
		}
	}
}

// drain handles Ready until raft has nothing more, then starts the
// active controller if this node leads and has applied its whole log.
func (n *Node) drain() error {
	for n.rn.HasReady() {
		if err := n.handleReady(n.rn.Ready()); err != nil {
			return err
		}
	}
	n.maybeActivate()
	n.maybeSnapshot()
	return nil
}

// handleReady does what raft's doc.go asks, in order: persist the
// snapshot, the entries and the hard state; then send the messages;
// then apply the committed entries; then Advance.
func (n *Node) handleReady(rd raft.Ready) error {
	if rd.SoftState != nil {
		n.softState(rd.SoftState)
	}
	if !raft.IsEmptySnap(rd.Snapshot) {
		if err := n.st.ApplySnapshot(rd.Snapshot); err != nil {
			return fmt.Errorf("quorum: apply snapshot: %w", err)
		}
		if err := n.restore(rd.Snapshot); err != nil {
			return err
		}
		n.snaps.Add(1)
		n.pub.Publish(n.img)
	}
	if err := n.st.Append(rd.Entries); err != nil {
		return fmt.Errorf("quorum: append: %w", err)
	}
	if !raft.IsEmptyHardState(rd.HardState) {
		if err := n.st.SetHardState(rd.HardState); err != nil {
			return fmt.Errorf("quorum: hard state: %w", err)
		}
	}
	n.send(rd.Messages)
	n.applyEntries(rd.CommittedEntries)
	n.rn.Advance(rd)
	return nil
}

// softState follows raft's leader: a node that stops leading drops its
// controller.
func (n *Node) softState(ss *raft.SoftState) {
	n.leader.Store(nodeID(ss.Lead))
	if ss.RaftState != raft.StateLeader {
		n.dropController(errNotController)
	}
}

// applyEntries replays committed entries in order, publishes the image
// they make, then answers the requests whose entries they are.
func (n *Node) applyEntries(ents []*raftpb.Entry) {
	if len(ents) == 0 {
		return
	}
	var answered []uint64
	changed := false
	for _, e := range ents {
		switch e.GetType() {
		case raftpb.EntryNormal:
			if len(e.GetData()) > 0 {
				id, ok := n.applyNormal(e)
				changed = changed || ok
				if id != 0 {
					answered = append(answered, id)
				}
			}
		case raftpb.EntryConfChange, raftpb.EntryConfChangeV2:
			n.applyConfChange(e)
		}
		n.applied = e.GetIndex()
	}
	if changed {
		n.pub.Publish(n.img)
	}
	if n.ctl != nil {
		for _, id := range answered {
			n.ctl.committed(id)
		}
	}
}

// openTxn is a metadata transaction being applied: its records wait
// for its EndTransactionRecord.
type openTxn struct {
	index uint64 // the raft index of its BeginTransactionRecord
	recs  []metadata.Record
}

// applyNormal reads one entry's record (entry.go). A record outside a
// transaction replays at once; one inside waits for the End, where the
// transaction's records replay together, or is dropped at an Abort, so
// that the image, the metadata offset, snapshots and the publisher see
// whole changes only. Kafka: KIP-868.
func (n *Node) applyNormal(e *raftpb.Entry) (id uint64, changed bool) {
	n.snapBytes += int64(len(e.GetData()))
	id, rec, err := parseEntry(e.GetData())
	if err != nil {
		if lid, recs, lerr := parseLegacyEntry(e.GetData()); lerr == nil {
			return lid, n.replay(e.GetIndex(), recs)
		}
		n.log.Error("metadata entry skipped", "index", e.GetIndex(), "err", err)
		return id, false
	}
	switch rec.(type) {
	case metadata.BeginTransactionRecord:
		if n.txn != nil {
			n.log.Error("metadata transaction not ended, dropped", "begin", n.txn.index, "index", e.GetIndex())
		}
		n.txn = &openTxn{index: e.GetIndex()}
		return id, false
	case metadata.EndTransactionRecord:
		if n.txn == nil {
			n.log.Error("end of no metadata transaction", "index", e.GetIndex())
			return id, false
		}
		recs := n.txn.recs
		n.txn = nil
		return id, n.replay(e.GetIndex(), recs)
	case metadata.AbortTransactionRecord:
		if n.txn != nil {
			n.log.Info("metadata transaction aborted", "begin", n.txn.index, "records", len(n.txn.recs))
		}
		n.txn = nil
		return id, false
	case metadata.NoOpRecord:
		return id, false
	}
	if n.txn != nil {
		n.txn.recs = append(n.txn.recs, rec)
		return id, false
	}
	return id, n.replay(e.GetIndex(), []metadata.Record{rec})
}

// replay applies one change's records. The metadata offset moves by
// their count whether or not they apply, so that every node counts the
// log's records alike; records that do not apply (a bug of the
// controller that wrote them) leave the image, on every node, as it
// was. Framing records (metadata.IsControl) are not counted.
func (n *Node) replay(index uint64, recs []metadata.Record) bool {
	n.offset.Add(int64(len(recs)))
	next, err := metadata.Apply(n.img, recs...)
	if err != nil {
		n.log.Error("metadata records do not apply", "index", index, "err", err)
		return false
	}
	n.img = next
	return true
}

// applyConfChange applies a membership change: the voters are fixed at
// bootstrap, learners are added as they register (learner.go).
func (n *Node) applyConfChange(e *raftpb.Entry) {
	var cc raftpb.ConfChangeI
	if e.GetType() == raftpb.EntryConfChange {
		c := &raftpb.ConfChange{}
		if err := proto.Unmarshal(e.GetData(), c); err != nil {
			n.log.Error("conf change skipped", "index", e.GetIndex(), "err", err)
			return
		}
		cc = c
	} else {
		c := &raftpb.ConfChangeV2{}
		if err := proto.Unmarshal(e.GetData(), c); err != nil {
			n.log.Error("conf change skipped", "index", e.GetIndex(), "err", err)
			return
		}
		cc = c
	}
	n.conf = n.rn.ApplyConfChange(cc)
	// Snapshot soon: a learner behind the compaction point refuses a
	// snapshot whose configuration does not name it.
	n.confChanged = true
}

// maybeSnapshot writes a snapshot of the image at the applied index
// and compacts the log there, every SnapshotBytes of entries or every
// SnapshotIntervalMs when something was applied since the last one,
// and after a membership change.
// Kafka: metadata.log.max.record.bytes.between.snapshots and
// metadata.log.max.snapshot.interval.ms.
func (n *Node) maybeSnapshot() {
	if n.applied <= n.snapIndex || n.txn != nil { // never inside a transaction
		return
	}
	due := n.confChanged || n.snapBytes >= n.cfg.SnapshotBytes ||
		time.Since(n.snapAt) >= time.Duration(n.cfg.SnapshotIntervalMs)*time.Millisecond
	if !due {
		return
	}
	data := encodeSnapshot(n.img, n.offset.Load())
	if _, err := n.st.CreateSnapshot(n.applied, n.conf, data); err != nil {
		n.log.Error("snapshot failed", "index", n.applied, "err", err)
		return
	}
	if err := n.st.Compact(n.applied); err != nil {
		n.log.Error("compaction failed", "index", n.applied, "err", err)
		return
	}
	n.log.Debug("snapshot taken", "index", n.applied, "offset", n.offset.Load(), "bytes", len(data))
	n.snapIndex, n.snapAt, n.snapBytes, n.confChanged = n.applied, time.Now(), 0, false
}
