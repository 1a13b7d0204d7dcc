package quorum

import (
	"context"
	"encoding/binary"
	"errors"
	stdnet "net"
	"sync/atomic"
	"syscall"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"golang.org/x/sys/unix"
	"google.golang.org/protobuf/proto"

	vnet "github.com/varve/varve/net"
)

// RaftMessageKey is the API key of the requests that carry raft
// messages between the nodes of the quorum, on the controller listener.
// Kafka assigns no API key this high; a Kafka broker or controller
// receiving it closes the connection, as it does for any key it does
// not know. The request is Kafka-framed (size, request header v1 with
// version 0 and the sender's client id "varve-raft-<node id>"), its body
// one raftpb.Message in protobuf encoding, and it has no response: the
// receiver answers nothing and reads the next frame, so a sender writes
// frames one after another and never reads.
const RaftMessageKey int16 = 10000

// report is a peer's news for raft: a peer could not be reached, or a
// snapshot was sent (or not).
type report struct {
	to       uint64
	snapshot bool // a MsgSnap's outcome, else an unreachable peer
	failed   bool
}

// peer sends raft messages to one other member over one connection,
// dialed from this node's host. Its queue is bounded: a message that
// does not fit, or that cannot be written, is dropped and raft is told
// the peer is unreachable (raft retransmits what matters).
type peer struct {
	n     *Node
	id    uint64
	addr  atomic.Pointer[string] // host:port; a learner's may change
	q     chan *raftpb.Message
	conn  stdnet.Conn
	retry time.Time // no dial before
}

// startPeers starts a sender per other voter (learners' senders start
// as the configuration and the image name them: tickLearners).
func (n *Node) startPeers() {
	n.peers = map[uint64]*peer{}
	for _, v := range n.cfg.Voters {
		if v.ID == n.cfg.NodeID {
			continue
		}
		p := newPeer(n, raftID(v.ID), v.Addr)
		n.peers[p.id] = p
		n.wg.Add(1)
		go p.run()
	}
}

// send queues the loop's messages without blocking.
func (n *Node) send(msgs []*raftpb.Message) {
	for _, m := range msgs {
		p := n.peers[m.GetTo()]
		if p == nil {
			continue
		}
		select {
		case p.q <- m:
		default:
			n.rn.ReportUnreachable(p.id)
			if m.GetType() == raftpb.MsgSnap {
				n.rn.ReportSnapshot(p.id, raft.SnapshotFailure)
			}
		}
	}
}

// applyReport hands a peer's report to raft.
func (n *Node) applyReport(r report) {
	switch {
	case r.snapshot && r.failed:
		n.rn.ReportSnapshot(r.to, raft.SnapshotFailure)
	case r.snapshot:
		n.rn.ReportSnapshot(r.to, raft.SnapshotFinish)
	default:
		n.rn.ReportUnreachable(r.to)
	}
}

// run writes queued messages until the node stops.
func (p *peer) run() {
	defer p.n.wg.Done()
	defer func() {
		if p.conn != nil {
			p.conn.Close()
		}
	}()
	var buf []byte
	for {
		var m *raftpb.Message
		select {
		case m = <-p.q:
		case <-p.n.stopc:
			return
		}
		var err error
		buf, err = p.write(buf[:0], m)
		snap := m.GetType() == raftpb.MsgSnap
		if err != nil {
			p.n.log.Debug("raft message not sent", "to", nodeID(p.id), "type", m.GetType(), "err", err)
			p.report(report{to: p.id, failed: true})
		}
		if snap {
			p.report(report{to: p.id, snapshot: true, failed: err != nil})
		}
	}
}

// write frames m and writes it, dialing first if needed.
func (p *peer) write(buf []byte, m *raftpb.Message) ([]byte, error) {
	if err := p.dial(); err != nil {
		return buf, err
	}
	buf = append(buf, 0, 0, 0, 0)
	buf = vnet.AppendRequestHeader(buf, vnet.RequestHeader{Key: RaftMessageKey, ClientID: p.n.clientID()})
	buf, err := proto.MarshalOptions{}.MarshalAppend(buf, m)
	if err != nil {
		return buf, err
	}
	binary.BigEndian.PutUint32(buf, uint32(len(buf)-4))
	p.conn.SetWriteDeadline(time.Now().Add(p.timeout()))
	if _, err := p.conn.Write(buf); err != nil {
		p.conn.Close()
		p.conn = nil
		return buf, err
	}
	return buf, nil
}

// dial connects to the peer from this node's host, at most once per
// retry backoff.
func (p *peer) dial() error {
	if p.conn != nil {
		return nil
	}
	if time.Now().Before(p.retry) {
		return errBackoff
	}
	d := stdnet.Dialer{Timeout: p.timeout(), LocalAddr: localHost(p.n.cfg.ListenAddr), Control: userTimeout(p.timeout())}
	addr := *p.addr.Load()
	c, err := d.Dial("tcp", addr)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), p.timeout())
		c, err = p.n.cfg.secure(ctx, c, addr)
		cancel()
	}
	if err != nil {
		p.retry = time.Now().Add(p.n.cfg.tick())
		return err
	}
	p.conn = c
	return nil
}

func (p *peer) timeout() time.Duration {
	return time.Duration(p.n.cfg.ElectionTimeoutMs) * time.Millisecond
}

// report hands r to the loop, unless the node stops first.
func (p *peer) report(r report) {
	select {
	case p.n.reportc <- r:
	case <-p.n.stopc:
	}
}

func (n *Node) clientID() string { return "varve-raft-" + itoa(n.cfg.NodeID) }

// serveRaft takes one raft message off the wire. A message the loop
// has no room for is dropped, as the network could have dropped it.
func (n *Node) serveRaft(req *vnet.Request, respond func(vnet.Response)) {
	m := &raftpb.Message{}
	if err := proto.Unmarshal(req.Body, m); err != nil {
		n.log.Warn("bad raft message, connection closed", "from", req.Conn.Remote, "err", err)
		respond(vnet.Response{Close: true})
		return
	}
	req.ReleaseBody()
	if m.GetTo() != raftID(n.cfg.NodeID) {
		respond(vnet.Response{Close: true})
		return
	}
	select {
	case n.recvc <- m:
	case <-n.stopc:
	default:
	}
	respond(vnet.Response{NoResponse: true})
}

// userTimeout sets TCP_USER_TIMEOUT on a connection: data the peer has
// not acknowledged within d closes it. Raft messages are one-way, so
// nothing else would notice a link that stopped delivering: the writes
// would sit in the kernel's buffer until TCP's next retransmission,
// seconds after the link heals, and the peer would hear nothing
// meanwhile (a partition healed in 0.1 s kept a follower deaf for up to
// 5 s). Closed, the connection is dialed again, which succeeds as soon
// as the link is back. Kafka's raft client gets the same from its
// request timeout, as its Fetch requests expect answers.
func userTimeout(d time.Duration) func(network, address string, c syscall.RawConn) error {
	return func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(d/time.Millisecond))
		})
		return errors.Join(err, serr)
	}
}
