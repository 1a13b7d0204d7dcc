package group

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Static membership (KIP-345): a member with a group.instance.id that
// restarts and joins without its member id takes over its old slot. In
// a Stable group whose protocol choice does not change, that costs no
// rebalance: the member gets the current generation and its stored
// assignment. Whoever still held the old member id is fenced
// (FENCED_INSTANCE_ID).

// replaceStaticMember moves the member of instance id jr.instanceID from
// oldID to jr.memberID and rebalances only if it must (Kafka's
// updateStaticMemberAndRebalance).
func (c *Coordinator) replaceStaticMember(g *group, oldID string, jr joinRequest) {
	oldLeader := g.leader
	old := g.members[oldID]
	if code := g.admit(memberCost(old, jr.protocols, old.assignment) - old.charged); code != 0 {
		c.refuseJoin(g, jr, code, false) // the old member id keeps the slot
		return
	}
	m := c.swapStaticID(g, jr.instanceID, oldID, jr.memberID)
	c.scheduleHeartbeat(g, m)
	oldProtocols, oldRebalance, oldSession := m.protocols, m.rebalanceTimeout, m.sessionTimeout
	g.update(m, jr.protocols, jr.rebalance, jr.session, jr.reply, jr.version)
	g.settle(m)
	switch g.state {
	case Stable:
		if g.selectProtocol() != g.protocol {
			c.maybePrepareRebalance(g, "static member "+m.id+" changed the group's protocol")
			return
		}
		assignment := map[string][]byte{}
		for id, gm := range g.members {
			assignment[id] = gm.assignment
		}
		if code := c.storeGroup(g, assignment); code != 0 {
			// Not persisted: put the old member id back.
			g.update(m, oldProtocols, oldRebalance, oldSession, nil, 0)
			g.forceSettle(m)
			back := c.swapStaticID(g, jr.instanceID, jr.memberID, oldID)
			c.scheduleHeartbeat(g, back)
			resp := c.joinResult(g, back, false, false)
			resp.MemberID, resp.LeaderID, resp.ErrorCode = "", oldLeader, code
			jr.reply(resp)
			return
		}
		c.answerStaticRejoin(g, m, oldLeader, jr.version)
	case CompletingRebalance:
		// The leader may already be assigning to the old member id:
		// rebalance so that the new id gets an assignment.
		c.prepareRebalance(g, "static member "+m.id+" rejoined during CompletingRebalance")
	}
}

// answerStaticRejoin answers a static member that took over its slot in
// a Stable group. From JoinGroup v9 the leader is told it leads but may
// skip the assignment (KIP-814); before, the old leader id is returned
// so that a rejoining leader does not compute an assignment a Stable
// group would never distribute.
func (c *Coordinator) answerStaticRejoin(g *group, m *member, oldLeader string, version int16) {
	var resp *kmsg.JoinGroupResponse
	if version >= 9 {
		leader := g.isLeader(m.id)
		resp = c.joinResult(g, m, leader, leader)
	} else {
		resp = c.joinResult(g, m, false, false)
		resp.LeaderID = oldLeader
	}
	g.answerJoin(m, resp)
}

// swapStaticID renames a static member, fencing whoever waits on the old
// id (Kafka's replaceStaticMember).
func (c *Coordinator) swapStaticID(g *group, instanceID, oldID, newID string) *member {
	m := g.members[oldID]
	g.answerJoin(m, joinError(oldID, kerr.FencedInstanceID.Code))
	g.answerSync(m, syncError(kerr.FencedInstanceID.Code))
	c.timers.cancel(heartbeatKey(g.id, oldID))
	delete(g.members, oldID)
	m.id = newID
	g.members[newID] = m
	for i, id := range g.order {
		if id == oldID {
			g.order[i] = newID
		}
	}
	if g.leader == oldID {
		g.leader = newID
	}
	if g.toSync[oldID] {
		delete(g.toSync, oldID)
		g.toSync[newID] = true
	}
	g.static[instanceID] = newID
	return m
}
