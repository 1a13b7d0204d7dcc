package group

import (
	"bytes"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Sync handles SyncGroup (Kafka's handleSyncGroup). Followers wait for
// the leader's assignment; the leader's SyncGroup stores the group with
// every member's assignment in __consumer_offsets, then answers all of
// them and makes the group Stable. reply is called once, before Sync
// returns or when the assignment arrives, the group rebalances, or the
// coordinator stops.
func (c *Coordinator) Sync(now time.Time, req *kmsg.SyncGroupRequest, reply SyncReply) {
	c.now = now
	if code := c.check(req.Group, kmsg.SyncGroup); code != 0 {
		if code == kerr.CoordinatorLoadInProgress.Code {
			// The rebalance state was lost with the load: the member must
			// rejoin, and old clients do not expect LOAD_IN_PROGRESS here.
			code = kerr.RebalanceInProgress.Code
		}
		reply(syncError(code))
		return
	}
	g := c.groups[req.Group]
	if g == nil {
		reply(syncError(kerr.UnknownMemberID.Code))
		return
	}
	if g.cons != nil {
		c.classicSyncConsumer(g, req, reply) // consumer_classic.go
		return
	}
	if code := validateSync(g, req); code != 0 {
		reply(syncError(code))
		return
	}
	switch g.state {
	case Empty:
		reply(syncError(kerr.UnknownMemberID.Code))
	case PreparingRebalance:
		reply(syncError(kerr.RebalanceInProgress.Code))
	case CompletingRebalance:
		c.syncCompleting(g, req, reply)
	case Stable:
		c.syncDone(g, req.MemberID)
		m := g.members[req.MemberID]
		reply(syncResult(g, m))
		c.scheduleHeartbeat(g, m)
	}
}

// validateSync is Kafka's validateSyncGroup.
func validateSync(g *group, req *kmsg.SyncGroupRequest) int16 {
	if g.is(Dead) {
		return kerr.CoordinatorNotAvailable.Code
	}
	instanceID := ""
	if req.InstanceID != nil {
		instanceID = *req.InstanceID
	}
	if code := validateMember(g, req.MemberID, instanceID); code != 0 {
		return code
	}
	switch {
	case req.Generation != g.generation:
		return kerr.IllegalGeneration.Code
	case req.ProtocolType != nil && *req.ProtocolType != g.protocolType:
		return kerr.InconsistentGroupProtocol.Code
	case req.Protocol != nil && *req.Protocol != g.protocol:
		return kerr.InconsistentGroupProtocol.Code
	}
	return 0
}

// syncCompleting parks a SyncGroup in CompletingRebalance; the leader's
// completes the generation.
func (c *Coordinator) syncCompleting(g *group, req *kmsg.SyncGroupRequest, reply SyncReply) {
	m := g.members[req.MemberID]
	g.answerSync(m, syncError(kerr.RebalanceInProgress.Code)) // a resent SyncGroup replaces the first
	m.syncReply = reply
	c.syncDone(g, m.id)
	if !g.isLeader(m.id) {
		return
	}
	assignment := map[string][]byte{}
	for _, a := range req.GroupAssignment {
		if g.has(a.MemberID) {
			assignment[a.MemberID] = bytes.Clone(a.MemberAssignment)
		}
	}
	for id := range g.members {
		if assignment[id] == nil {
			assignment[id] = []byte{} // members the leader left out get nothing
		}
	}
	c.cfg.Logger.Info("assignment received from leader", "group", g.id, "generation", g.generation,
		"leader", m.id, "members", len(g.members))
	delta := assignmentDelta(g, assignment)
	if code := g.admit(delta); code != 0 {
		if code == kerr.GroupMaxSizeReached.Code {
			// Over the group's bound: answered as Kafka answers a group
			// record too large to store.
			code = appendCode(kerr.RecordListTooLarge, false)
		}
		c.resetAndPropagate(g, code)
		c.maybePrepareRebalance(g, "the group assignment is over the metadata bound")
		return
	}
	if code := c.storeGroup(g, assignment); code != 0 {
		g.refund(delta)
		c.resetAndPropagate(g, code)
		c.maybePrepareRebalance(g, "storing the group assignment failed")
		return
	}
	for id, a := range assignment {
		g.members[id].assignment = a
		g.settle(g.members[id])
	}
	c.propagate(g, 0)
	c.logTransition(g, Stable)
}

// assignmentDelta is how many more bytes g's members hold with
// assignment instead of their current one.
func assignmentDelta(g *group, assignment map[string][]byte) int64 {
	var delta int64
	for id, a := range assignment {
		m := g.members[id]
		delta += memberCost(m, m.protocols, a) - m.charged
	}
	return delta
}

// syncDone records that a member sent SyncGroup this generation.
func (c *Coordinator) syncDone(g *group, id string) {
	delete(g.toSync, id)
	if len(g.toSync) == 0 {
		c.timers.cancel(syncKey(g.id))
	}
}
