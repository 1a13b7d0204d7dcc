package quorum

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	stdnet "net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"

	"github.com/varve/varve/logdir"
	"github.com/varve/varve/metadata"
	vnet "github.com/varve/varve/net"
	"github.com/varve/varve/raftlog"
)

// ErrStopped is returned to requests made of a node that has stopped.
var ErrStopped = errors.New("quorum: node stopped")

// Node is one member of the controller quorum: its raft log, the raft
// loop, the controller listener, and, while it leads, the active
// controller. See the package documentation.
type Node struct {
	cfg    Config
	log    *slog.Logger
	st     *raftlog.Storage
	rn     *raft.RawNode // the loop's alone
	pub    *metadata.Publisher
	client *Client
	srv    *vnet.GoroutineServer
	ln     stdnet.Listener
	peers  map[uint64]*peer

	recvc   chan *raftpb.Message // raft messages from the transport
	reportc chan report          // peers' delivery reports
	opc     chan *op             // controller requests
	stopc   chan struct{}
	done    chan struct{}
	wg      sync.WaitGroup // the server and the peers' senders
	once    sync.Once
	err     atomic.Pointer[error] // why the loop stopped, if not asked to

	leader   atomic.Int32 // raft leader's node id, -1 when unknown
	isActive atomic.Bool  // this node runs the active controller
	offset   atomic.Int64 // metadata offset applied: records replayed
	snaps    atomic.Int64 // snapshots received from a leader and applied

	loopState // owned by the loop goroutine
}

// loopState is what the raft loop alone reads and writes.
type loopState struct {
	img       *metadata.Image
	applied   uint64 // raft index applied
	conf      *raftpb.ConfState
	ctl       *active // nil unless this node is the active controller
	snapIndex uint64
	snapAt    time.Time
	snapBytes int64 // entry bytes applied since the last snapshot
	// confChanged: a membership change applied since the last snapshot.
	confChanged bool
	seq         uint64 // the last proposal's sequence number
	// txn is the metadata transaction being applied, nil outside one.
	txn *openTxn
}

// New opens (creating and bootstrapping if empty) the node's metadata
// log in cfg.MetadataLogDir and replays its snapshot. The log dir's
// meta.properties is written if absent; one naming another cluster.id
// or node.id stops the node (logdir.ErrMetaMismatch). Nothing runs
// until Start.
func New(cfg Config) (*Node, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.logDir(), 0o755); err != nil {
		return nil, fmt.Errorf("quorum: %w", err)
	}
	if _, err := logdir.FormatOrCheck(nil, cfg.MetadataLogDir, cfg.NodeID, cfg.ClusterID); err != nil {
		return nil, fmt.Errorf("quorum: %w", err)
	}
	st, err := raftlog.Open(cfg.logDir(), raftlog.Options{SegmentBytes: cfg.SegmentBytes, Logger: cfg.Logger})
	if err != nil {
		return nil, fmt.Errorf("quorum: open %s: %w", cfg.logDir(), err)
	}
	n := &Node{cfg: cfg, log: cfg.Logger.With("node", cfg.NodeID), st: st,
		recvc: make(chan *raftpb.Message, 4096), reportc: make(chan report, 1024),
		opc: make(chan *op, 64), stopc: make(chan struct{}), done: make(chan struct{})}
	n.leader.Store(-1)
	if err := n.open(); err != nil {
		st.Close()
		return nil, err
	}
	n.client = newClient(&n.cfg, n.leader.Load)
	return n, nil
}

// open bootstraps an empty log with the voters, restores the image
// from the snapshot and starts the RawNode.
func (n *Node) open() error {
	_, cs, err := n.st.InitialState()
	if err != nil {
		return fmt.Errorf("quorum: %w", err)
	}
	if last, _ := n.st.LastIndex(); len(cs.GetVoters()) == 0 && last == 0 {
		// Bootstrapped as etcd's raft tests do: the voters in an empty
		// snapshot at index 0.
		boot := &raftpb.Snapshot{Metadata: &raftpb.SnapshotMetadata{ConfState: &raftpb.ConfState{Voters: n.cfg.voterIDs()}}}
		if err := n.st.ApplySnapshot(boot); err != nil {
			return fmt.Errorf("quorum: bootstrap: %w", err)
		}
	}
	snap, err := n.st.Snapshot()
	if err != nil {
		return fmt.Errorf("quorum: %w", err)
	}
	if err := n.restore(snap); err != nil {
		return err
	}
	n.pub = metadata.NewPublisher(n.img)
	rn, err := raft.NewRawNode(&raft.Config{
		ID: raftID(n.cfg.NodeID), ElectionTick: n.cfg.electionTicks(), HeartbeatTick: 1,
		Storage: n.st, Applied: n.applied, MaxSizePerMsg: 1 << 20, MaxInflightMsgs: 256,
		MaxUncommittedEntriesSize: 64 << 20, PreVote: true, CheckQuorum: true,
		Logger: raftLogger{n.log},
	})
	if err != nil {
		return fmt.Errorf("quorum: %w", err)
	}
	n.rn = rn
	return nil
}

// restore makes the snapshot's image the node's state.
func (n *Node) restore(snap *raftpb.Snapshot) error {
	img, offset, err := decodeSnapshot(n.cfg.ClusterID, snap.GetData())
	if err != nil {
		return err
	}
	n.img, n.applied = img, snap.GetMetadata().GetIndex()
	n.conf = snap.GetMetadata().GetConfState()
	n.snapIndex, n.snapAt, n.snapBytes = n.applied, time.Now(), 0
	n.offset.Store(offset)
	n.txn = nil // a snapshot is never taken inside a transaction
	return nil
}

// Start serves the controller listener, dials the peers and runs the
// raft loop.
func (n *Node) Start() error {
	ln, err := stdnet.Listen("tcp", n.cfg.ListenAddr)
	if err != nil {
		return fmt.Errorf("quorum: listen on %s: %w", n.cfg.ListenAddr, err)
	}
	ncfg := n.cfg.Net
	ncfg.InlineHandlers = true
	if ncfg.Logger == nil {
		ncfg.Logger = n.log
	}
	srv, err := vnet.NewGoroutineServer(ncfg, vnet.HandlerFunc(n.serve))
	if err != nil {
		ln.Close()
		return fmt.Errorf("quorum: %w", err)
	}
	n.srv, n.ln = srv, ln
	n.startPeers()
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		if n.cfg.TLS != nil {
			srv.ServeTLS(ln, n.cfg.TLS)
			return
		}
		srv.Serve(ln)
	}()
	go n.run()
	return nil
}

// Addr is the controller listener's address once started.
func (n *Node) Addr() string { return n.ln.Addr().String() }

// Publisher publishes every committed image, in order.
func (n *Node) Publisher() *metadata.Publisher { return n.pub }

// Client reaches the active controller.
func (n *Node) Client() *Client { return n.client }

// Leader is the raft leader's node id as this node knows it, -1 when
// it knows none.
func (n *Node) Leader() int32 { return n.leader.Load() }

// IsActive reports whether this node runs the active controller.
func (n *Node) IsActive() bool { return n.isActive.Load() }

// MetadataOffset is the offset of the last metadata record this node
// has replayed into its published image, -1 before any: what a broker's
// heartbeat reports.
func (n *Node) MetadataOffset() int64 { return n.offset.Load() - 1 }

// SnapshotsReceived counts the leader's snapshots this node has caught
// up from since it started.
func (n *Node) SnapshotsReceived() int64 { return n.snaps.Load() }

// Err is why the node stopped by itself (a storage write failed), nil
// while it runs or when it was stopped.
func (n *Node) Err() error {
	if p := n.err.Load(); p != nil {
		return *p
	}
	return nil
}

// Stop stops the node cleanly: the listener finishes the requests in
// flight (until ctx ends), the loop stops, the log is closed.
func (n *Node) Stop(ctx context.Context) error {
	if n.srv != nil {
		n.srv.Shutdown(ctx)
	}
	return n.halt()
}

// Kill stops the node as a crash would, for tests: connections are cut
// at once and nothing more is written. (Every write the node made
// returned only once durable, so the log is what a crash leaves.)
func (n *Node) Kill() {
	if n.srv != nil {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		n.srv.Shutdown(ctx)
	}
	n.halt()
}

func (n *Node) halt() error {
	var err error
	n.once.Do(func() {
		close(n.stopc)
		if n.srv != nil {
			<-n.done
		}
		n.wg.Wait()
		n.client.Close()
		err = n.st.Close()
	})
	return err
}

// fail stops the loop after an error it cannot recover from.
func (n *Node) fail(err error) {
	n.log.Error("quorum node stops", "err", err)
	n.err.Store(&err)
}

// raftLogger sends raft's logs to slog, at debug level but for errors.
type raftLogger struct{ l *slog.Logger }

func (r raftLogger) Debug(v ...any)              { r.l.Debug(fmt.Sprint(v...)) }
func (r raftLogger) Debugf(f string, v ...any)   { r.l.Debug(fmt.Sprintf(f, v...)) }
func (r raftLogger) Info(v ...any)               { r.l.Debug(fmt.Sprint(v...)) }
func (r raftLogger) Infof(f string, v ...any)    { r.l.Debug(fmt.Sprintf(f, v...)) }
func (r raftLogger) Warning(v ...any)            { r.l.Warn(fmt.Sprint(v...)) }
func (r raftLogger) Warningf(f string, v ...any) { r.l.Warn(fmt.Sprintf(f, v...)) }
func (r raftLogger) Error(v ...any)              { r.l.Error(fmt.Sprint(v...)) }
func (r raftLogger) Errorf(f string, v ...any)   { r.l.Error(fmt.Sprintf(f, v...)) }
func (r raftLogger) Fatal(v ...any)              { r.l.Error(fmt.Sprint(v...)); panic(fmt.Sprint(v...)) }
func (r raftLogger) Fatalf(f string, v ...any)   { r.Fatal(fmt.Sprintf(f, v...)) }
func (r raftLogger) Panic(v ...any)              { r.Fatal(v...) }
func (r raftLogger) Panicf(f string, v ...any)   { r.Fatal(fmt.Sprintf(f, v...)) }
