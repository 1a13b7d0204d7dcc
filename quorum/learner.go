package quorum

// Raft learners: broker-only nodes (process.roles=broker) follow the
// metadata log without voting, as Kafka's observers do (KIP-595), so
// that a cluster grows to many brokers on three controllers.
//
// A learner's raft address travels in its BrokerRegistration, as an
// endpoint named LearnerEndpoint after its broker listeners, so that it
// is in the metadata image: every voter knows it, whichever becomes
// leader, and snapshots keep it. The active controller adds every
// registered broker that has one and is not a voter to raft's
// configuration with ConfChangeAddLearnerNode; every voter dials each
// learner of the configuration at the address its registration names.

import (
	"fmt"
	"slices"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/varve/varve/metadata"
)

// LearnerEndpoint names the endpoint of a broker's registration that
// carries its raft learner address (varve.quorum.learner.listener).
// It is listed after the broker's listeners, so clients are never
// told of it, and no client's listener matches its name.
const LearnerEndpoint = "VARVE_RAFT_LEARNER"

// IsLearner reports whether this node follows the log without voting:
// it is not among controller.quorum.voters.
func (n *Node) IsLearner() bool { return !n.cfg.isVoter(n.cfg.NodeID) }

// LearnerEndpoint is the registration endpoint that tells the
// controllers where this node receives the log; ok is false on a voter.
func (n *Node) LearnerEndpoint() (e metadata.Endpoint, ok bool) {
	if !n.IsLearner() {
		return e, false
	}
	host, port, err := splitHostPort(n.Addr())
	if err != nil {
		return e, false
	}
	return metadata.Endpoint{Listener: LearnerEndpoint, Host: host, Port: port, SecurityProtocol: "PLAINTEXT"}, true
}

// learnerAddr is broker id's learner address in img, "" if none.
func learnerAddr(img *metadata.Image, id int32) string {
	b, ok := img.Broker(id)
	if !ok {
		return ""
	}
	for _, e := range b.Endpoints {
		if e.Listener == LearnerEndpoint {
			return fmt.Sprintf("%s:%d", e.Host, e.Port)
		}
	}
	return ""
}

// tickLearners runs every tick on the loop: a voter keeps a sender for
// each learner of the configuration (its leader, whichever voter that
// becomes, appends to them); the active controller adds registered
// learners raft does not know yet.
func (n *Node) tickLearners() {
	if n.IsLearner() {
		return
	}
	for _, id := range n.conf.GetLearners() {
		if addr := learnerAddr(n.img, nodeID(id)); addr != "" {
			n.ensurePeer(id, addr)
		}
	}
	if n.ctl != nil {
		n.addLearners()
	}
}

// ensurePeer starts a sender to raft id at addr, or points the existing
// one at addr (a learner registered again from another address).
func (n *Node) ensurePeer(id uint64, addr string) {
	if p := n.peers[id]; p != nil {
		if *p.addr.Load() != addr {
			p.addr.Store(&addr)
		}
		return
	}
	p := newPeer(n, id, addr)
	n.peers[id] = p
	n.wg.Add(1)
	go p.run()
}

// addLearners proposes ConfChangeAddLearnerNode for each registered
// broker with a learner endpoint that is neither a voter nor a learner
// yet, at most once per election timeout each (raft turns a conf change
// proposed while another is pending into an empty entry).
func (n *Node) addLearners() {
	now := time.Now()
	for _, b := range n.img.Brokers() {
		id := raftID(b.ID)
		if n.cfg.isVoter(b.ID) || slices.Contains(n.conf.GetLearners(), id) || learnerAddr(n.img, b.ID) == "" {
			continue
		}
		if at, ok := n.ctl.learnerAsked[id]; ok && now.Sub(at) < time.Duration(n.cfg.ElectionTimeoutMs)*time.Millisecond {
			continue
		}
		cc := &raftpb.ConfChange{Type: raftpb.ConfChangeAddLearnerNode.Enum(), NodeId: proto.Uint64(id)}
		if err := n.rn.ProposeConfChange(cc); err != nil {
			n.log.Warn("learner not added", "node", b.ID, "err", err)
			continue
		}
		n.ctl.learnerAsked[id] = now
		n.log.Info("adding raft learner", "node", b.ID, "addr", learnerAddr(n.img, b.ID))
	}
}

// newPeer returns a sender to raft id at addr, not yet running.
func newPeer(n *Node, id uint64, addr string) *peer {
	p := &peer{n: n, id: id, q: make(chan *raftpb.Message, n.cfg.PeerQueue)}
	p.addr.Store(&addr)
	return p
}
