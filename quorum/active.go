package quorum

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"

	"github.com/varve/varve/controller"
	"github.com/varve/varve/metadata"
)

// errNotController answers a request this node cannot serve as the
// active controller.
var errNotController = kerr.NotController

// op is one request of the active controller. run is called on the
// loop with the controller and the time in ms; it returns the records
// to commit (answering is up to done). done is called once, on the
// loop: with nil once the records are committed and applied (at once
// when there are none and nothing proposed before them is pending),
// else with errNotController, ErrStopped, or the controller's error.
type op struct {
	run  func(c *controller.Controller, now int64) ([]metadata.Record, error)
	done func(err error)
	// local ops need no controller: run is called with nil, on any node.
	local bool
}

// active is the active controller and its proposals in flight.
type active struct {
	c    *controller.Controller
	term uint64
	// pending maps a proposal id to the callbacks waiting for its entry;
	// last is the newest proposal's id.
	pending map[uint64][]func(error)
	last    uint64
	// learnerAsked is when each learner's addition was last proposed.
	learnerAsked map[uint64]time.Time
}

// maybeActivate starts the active controller once this node leads and
// has applied its whole log, which ends with an entry of its own term
// (the empty entry raft appends on election): then every entry of an
// earlier term that will ever commit has been replayed. Kafka: the new
// active controller replays the log up to its own epoch's first offset.
func (n *Node) maybeActivate() {
	st := n.rn.BasicStatus()
	if n.ctl != nil || st.RaftState != raft.StateLeader || st.LeadTransferee != raft.None {
		return
	}
	last, err := n.st.LastIndex()
	if err != nil || n.applied != last {
		return
	}
	if t, err := n.st.Term(last); err != nil || t != st.GetTerm() {
		return
	}
	now := time.Now().UnixMilli()
	n.ctl = &active{c: controller.New(n.cfg.Controller, n.img, n.offset.Load(), now),
		term: st.GetTerm(), pending: map[uint64][]func(error){}, learnerAsked: map[uint64]time.Time{}}
	n.isActive.Store(true)
	n.log.Info("active controller", "term", st.GetTerm(), "offset", n.offset.Load())
	if !n.abortOpenTxn() {
		return
	}
	// A new cluster's first records are its finalized features.
	recs, err := n.ctl.c.Bootstrap()
	if err != nil {
		n.log.Error("controller bootstrap failed", "err", err)
		n.dropController(errNotController)
		return
	}
	n.propose(recs, nil)
}

// dropController stops being the active controller: every request
// waiting for its entry is answered with err.
func (n *Node) dropController(err error) {
	if n.ctl == nil {
		return
	}
	for _, fs := range n.ctl.pending {
		for _, f := range fs {
			f(err)
		}
	}
	n.ctl = nil
	n.isActive.Store(false)
	n.log.Info("no longer the active controller", "reason", err)
}

// runOp runs a request on the active controller and proposes its
// records as one entry.
func (n *Node) runOp(o *op) {
	if o.local {
		o.run(nil, time.Now().UnixMilli())
		return
	}
	if n.ctl == nil {
		o.done(errNotController)
		return
	}
	start := time.Now()
	recs, err := o.run(n.ctl.c, start.UnixMilli())
	if err != nil {
		// The controller made records its own image refuses: a bug. A
		// new controller starts from the committed image.
		n.log.Error("controller operation failed", "err", err)
		o.done(kerr.UnknownServerError)
		n.dropController(errNotController)
		return
	}
	n.propose(recs, n.observeElections(recs, start, o.done))
}

// propose appends recs to the log as one change (entry.go); done is
// called when it applies. With no records, done waits for the newest pending proposal
// (the answer may rest on it), as Kafka's controller completes a write
// of no records once the log's committed offset reaches its end.
func (n *Node) propose(recs []metadata.Record, done func(error)) {
	a := n.ctl
	if len(recs) == 0 {
		if done == nil {
			return
		}
		if fs, ok := a.pending[a.last]; ok {
			a.pending[a.last] = append(fs, done)
		} else {
			done(nil)
		}
		return
	}
	n.seq++
	id := raftID(n.cfg.NodeID)<<48 | n.seq&(1<<48-1)
	if err := n.proposeEntries(encodeEntries(id, recs)); err != nil {
		n.log.Warn("proposal dropped", "err", err)
		if done != nil {
			done(errNotController)
		}
		n.dropController(errNotController)
		return
	}
	a.pending[id] = nil
	if done != nil {
		a.pending[id] = []func(error){done}
	}
	a.last = id
}

// proposeEntries proposes entries of data together: one MsgProp, which
// the leader appends whole or drops whole.
func (n *Node) proposeEntries(data [][]byte) error {
	m := &raftpb.Message{Type: raftpb.MsgProp.Enum(), From: new(raftID(n.cfg.NodeID))}
	for _, d := range data {
		m.Entries = append(m.Entries, &raftpb.Entry{Data: d})
	}
	return n.rn.Step(m)
}

// abortOpenTxn appends an AbortTransactionRecord when the committed log
// ends inside a metadata transaction, which its writer, a controller
// no longer active, will not end. Kafka: a new active controller aborts
// the transaction it finds open before it writes (KIP-868).
func (n *Node) abortOpenTxn() bool {
	if n.txn == nil {
		return true
	}
	n.log.Warn("aborting the metadata transaction left open", "begin", n.txn.index, "records", len(n.txn.recs))
	abort := metadata.AppendRecord(nil, metadata.AbortTransactionRecord{Reason: "controller failover"})
	if err := n.proposeEntries([][]byte{abort}); err != nil {
		n.log.Warn("abort proposal dropped", "err", err)
		n.dropController(errNotController)
		return false
	}
	return true
}

// committed answers the requests waiting for the entry with id.
func (a *active) committed(id uint64) {
	fs, ok := a.pending[id]
	if !ok {
		return
	}
	delete(a.pending, id)
	for _, f := range fs {
		f(nil)
	}
}

// tickController runs the controller's timers: fencing brokers whose
// session expired, the automatic leader rebalance.
func (n *Node) tickController() {
	if n.ctl == nil {
		return
	}
	start := time.Now()
	recs, err := n.ctl.c.Tick(start.UnixMilli())
	if err != nil {
		n.log.Error("controller tick failed", "err", err)
		n.dropController(errNotController)
		return
	}
	n.propose(recs, n.observeElections(recs, start, nil))
}

// observeElections wraps done so that, once recs have applied,
// Config.OnElections is told of the leader elections among them: the
// PartitionChangeRecords that name a new leader, unclean when they set
// the recovery state RECOVERING.
func (n *Node) observeElections(recs []metadata.Record, start time.Time, done func(error)) func(error) {
	elected, unclean := countElections(recs)
	if n.cfg.OnElections == nil || elected == 0 {
		return done
	}
	return func(err error) {
		if err == nil {
			n.cfg.OnElections(elected, unclean, time.Since(start))
		}
		if done != nil {
			done(err)
		}
	}
}

func countElections(recs []metadata.Record) (elected, unclean int) {
	for _, r := range recs {
		pc, ok := r.(metadata.PartitionChangeRecord)
		if !ok || pc.Leader < 0 {
			continue
		}
		elected++
		if pc.LeaderRecovery != nil && *pc.LeaderRecovery == metadata.Recovering {
			unclean++
		}
	}
	return elected, unclean
}

// submit hands o to the loop; false when the node has stopped.
func (n *Node) submit(o *op) bool {
	select {
	case n.opc <- o:
		return true
	case <-n.stopc:
		return false
	}
}
