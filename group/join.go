package group

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Client identifies who sent a request, for member ids and DescribeGroups.
type Client struct {
	ID   string // client.id from the request header
	Host string // the peer's address, as Kafka shows it ("/127.0.0.1")
	// MayDescribe reports whether the client may DESCRIBE a topic: a
	// consumer group's regular expressions resolve only to such topics
	// (consumer_regex.go). Nil allows every topic.
	MayDescribe func(topic string) bool
}

// joinRequest is a JoinGroup with Kafka's version rules applied.
type joinRequest struct {
	groupID, memberID, instanceID string
	protocolType                  string
	protocols                     []protocol
	session, rebalance            int32
	version                       int16
	client                        Client
	reply                         JoinReply
}

// Join handles JoinGroup (Kafka's handleJoinGroup). reply is called once,
// either before Join returns or when the rebalance completes, a
// deadline passes, or the coordinator stops.
func (c *Coordinator) Join(now time.Time, req *kmsg.JoinGroupRequest, client Client, reply JoinReply) {
	c.now = now
	jr := joinRequest{groupID: req.Group, memberID: req.MemberID, protocolType: req.ProtocolType,
		protocols: protocolsOf(req.Protocols), session: req.SessionTimeoutMillis,
		rebalance: req.RebalanceTimeoutMillis, version: req.Version, client: client, reply: reply}
	if req.InstanceID != nil {
		jr.instanceID = *req.InstanceID
	}
	if req.Version == 0 {
		jr.rebalance = jr.session // v0 has no rebalance timeout: the session timeout serves
	}
	if code := c.check(jr.groupID, kmsg.JoinGroup); code != 0 {
		reply(joinError(jr.memberID, code))
		return
	}
	session := time.Duration(jr.session) * time.Millisecond
	if session < c.cfg.MinSessionTimeout || session > c.cfg.MaxSessionTimeout {
		reply(joinError(jr.memberID, kerr.InvalidSessionTimeout.Code))
		return
	}
	g := c.groups[jr.groupID]
	if g == nil {
		if jr.memberID != "" {
			reply(joinError(jr.memberID, kerr.UnknownMemberID.Code))
			return
		}
		g = newGroup(jr.groupID, now, c.bounds)
		c.groups[jr.groupID] = g
	}
	if g.cons != nil && len(g.cons.members) > 0 {
		c.classicJoinConsumer(g, jr) // consumer_classic.go
		return
	}
	if code := c.revertConsumerGroup(g); code != 0 {
		reply(joinError(jr.memberID, code))
		return
	}
	switch {
	case !c.acceptJoining(g, jr.memberID):
		g.remove(jr.memberID)
		reply(joinError(jr.memberID, kerr.GroupMaxSizeReached.Code))
	case jr.memberID == "":
		c.joinNewMember(g, jr)
	default:
		c.joinCurrentMember(g, jr)
	}
	if g.is(PreparingRebalance) {
		c.tryCompleteJoin(g)
	}
}

// acceptJoining applies group.max.size (Kafka's acceptJoiningMember).
func (c *Coordinator) acceptJoining(g *group, memberID string) bool {
	switch g.state {
	case PreparingRebalance:
		m := g.members[memberID]
		return (m != nil && m.awaitingJoin()) || g.awaiting < c.cfg.MaxSize
	case CompletingRebalance, Stable:
		return g.has(memberID) || len(g.members) < c.cfg.MaxSize
	}
	return true
}

// joinNewMember handles a JoinGroup without a member id.
func (c *Coordinator) joinNewMember(g *group, jr joinRequest) {
	switch {
	case g.is(Dead):
		jr.reply(joinError("", kerr.CoordinatorNotAvailable.Code))
		return
	case !g.supportsProtocols(jr.protocolType, jr.protocols):
		jr.reply(joinError("", kerr.InconsistentGroupProtocol.Code))
		return
	}
	prefix := jr.client.ID
	if jr.instanceID != "" {
		prefix = jr.instanceID
	}
	jr.memberID = prefix + "-" + c.cfg.NewUUID()
	switch {
	case jr.instanceID != "":
		c.joinNewStaticMember(g, jr)
	case jr.version >= 4:
		// KIP-394: hand out the id and have the member rejoin with it, so
		// a client that times out and retries does not leave a ghost.
		g.pending[jr.memberID] = true
		c.timers.set(pendingKey(g.id, jr.memberID), c.now.Add(time.Duration(jr.session)*time.Millisecond))
		jr.reply(joinError(jr.memberID, kerr.MemberIDRequired.Code))
	default:
		c.addMemberAndRebalance(g, jr)
	}
}

// joinNewStaticMember: a static member joining without a member id
// either takes over its instance id's slot or is added (KIP-345).
func (c *Coordinator) joinNewStaticMember(g *group, jr joinRequest) {
	old, ok := g.staticMember(jr.instanceID)
	if !ok {
		c.addMemberAndRebalance(g, jr)
		return
	}
	c.cfg.Logger.Info("static member rejoins with a new member id", "group", g.id,
		"instance_id", jr.instanceID, "old_member", old, "new_member", jr.memberID, "state", g.state)
	c.replaceStaticMember(g, old, jr)
}

// addMemberAndRebalance adds a member parked in JoinGroup and starts a
// rebalance if the group is not already in one.
func (c *Coordinator) addMemberAndRebalance(g *group, jr joinRequest) {
	m := &member{id: jr.memberID, instanceID: jr.instanceID, clientID: jr.client.ID, clientHost: jr.client.Host,
		rebalanceTimeout: jr.rebalance, sessionTimeout: jr.session, protocolType: jr.protocolType,
		protocols: jr.protocols, isNew: true}
	if code := g.admit(m.cost()); code != 0 {
		c.refuseJoin(g, jr, code, g.pending[jr.memberID])
		return
	}
	if g.is(PreparingRebalance) && g.generation == 0 {
		g.newMemberAdded = true
	}
	g.add(m, jr.reply, jr.version)
	g.settle(m)
	c.timers.cancel(pendingKey(g.id, m.id)) // a pending member that came back
	// A new member cannot heartbeat before its JoinGroup is answered; a
	// client that gave up and retried would leave it behind, so it
	// expires after the new-member join timeout.
	c.timers.set(heartbeatKey(g.id, m.id), c.now.Add(NewMemberJoinTimeout))
	c.maybePrepareRebalance(g, "adding new member "+m.id)
}

// joinCurrentMember handles a JoinGroup from a member id the group gave
// out (Kafka's doCurrentMemberJoinGroup).
func (c *Coordinator) joinCurrentMember(g *group, jr joinRequest) {
	switch {
	case g.is(Dead):
		jr.reply(joinError(jr.memberID, kerr.CoordinatorNotAvailable.Code))
		return
	case !g.supportsProtocols(jr.protocolType, jr.protocols):
		jr.reply(joinError(jr.memberID, kerr.InconsistentGroupProtocol.Code))
		return
	case g.pending[jr.memberID]:
		c.addMemberAndRebalance(g, jr)
		return
	}
	if code := validateMember(g, jr.memberID, jr.instanceID); code != 0 {
		jr.reply(joinError(jr.memberID, code))
		return
	}
	m := g.members[jr.memberID]
	switch g.state {
	case PreparingRebalance:
		c.updateMemberAndRebalance(g, m, jr, "member rejoins during PreparingRebalance")
	case CompletingRebalance:
		if m.matches(jr.protocols) {
			// The member lost its JoinGroup response: send it again.
			jr.reply(c.joinResult(g, m, g.isLeader(m.id), false))
			return
		}
		c.updateMemberAndRebalance(g, m, jr, "member changed its metadata during CompletingRebalance")
	case Stable:
		if g.isLeader(m.id) || !m.matches(jr.protocols) {
			// The leader rejoins to trigger a rebalance (for example when
			// topic metadata changed); a follower does so by changing its
			// metadata.
			c.updateMemberAndRebalance(g, m, jr, "leader rejoined or member metadata changed during Stable")
			return
		}
		jr.reply(c.joinResult(g, m, false, false))
	default:
		jr.reply(joinError(jr.memberID, kerr.UnknownMemberID.Code))
	}
}

// validateMember checks that memberID is in the group and, for a static
// member, still holds instanceID (Kafka's validateCurrentMember).
func validateMember(g *group, memberID, instanceID string) int16 {
	if instanceID != "" {
		cur, ok := g.staticMember(instanceID)
		switch {
		case !ok:
			return kerr.UnknownMemberID.Code
		case cur != memberID:
			return kerr.FencedInstanceID.Code
		}
		return 0
	}
	if !g.has(memberID) {
		return kerr.UnknownMemberID.Code
	}
	return 0
}

func (c *Coordinator) updateMemberAndRebalance(g *group, m *member, jr joinRequest, reason string) {
	if code := g.admit(memberCost(m, jr.protocols, m.assignment) - m.charged); code != 0 {
		c.refuseJoin(g, jr, code, true) // the member keeps its current metadata
		return
	}
	g.update(m, jr.protocols, jr.rebalance, jr.session, jr.reply, jr.version)
	g.settle(m)
	c.maybePrepareRebalance(g, reason)
}

// refuseJoin answers a JoinGroup whose metadata would exceed a bound
// (bound.go), with the member id only if the client had it (known); a
// pending member told MEMBER_ID_REQUIRED is forgotten, as
// group.max.size forgets it. Nothing of the request is kept.
func (c *Coordinator) refuseJoin(g *group, jr joinRequest, code int16, known bool) {
	c.cfg.Logger.Warn("JoinGroup refused: member metadata over its bound", "group", g.id,
		"member", jr.memberID, "client", jr.client.ID, "host", jr.client.Host, "code", code,
		"group_bytes", g.metaBytes, "broker_bytes", g.bounds.budget.Used())
	if g.pending[jr.memberID] {
		c.removePendingAndUpdate(g, jr.memberID)
	}
	id := ""
	if known {
		id = jr.memberID
	}
	jr.reply(joinError(id, code))
}

// joinResult is a successful JoinGroup response for m; the leader's
// lists the members and their metadata.
func (c *Coordinator) joinResult(g *group, m *member, withMembers, skipAssignment bool) *kmsg.JoinGroupResponse {
	r := kmsg.NewPtrJoinGroupResponse()
	r.Generation, r.MemberID, r.LeaderID = g.generation, m.id, g.leader
	r.ProtocolType, r.Protocol = nullable(g.protocolType), nullable(g.protocol)
	r.SkipAssignment = skipAssignment
	r.Members = []kmsg.JoinGroupResponseMember{}
	if withMembers {
		r.Members = g.leaderMembers()
	}
	return r
}
