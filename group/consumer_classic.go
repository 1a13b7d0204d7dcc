package group

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Classic members in a consumer group (Kafka's
// GroupMetadataManager.classicGroupJoinToConsumerGroup, ...Sync...,
// ...Heartbeat..., ...Leave...): a consumer of the classic protocol
// (protocol type "consumer") may be a member of a KIP-848 group. The
// broker computes its assignment like any member's: its JoinGroup
// carries its subscription and the partitions it owns (the consumer
// protocol's subscription), bumps the group epoch if it is new or its
// subscription changed, and is answered at once with its member epoch
// as the generation and no leader; its SyncGroup gets the partitions it
// holds as a consumer protocol assignment. Its heartbeats answer
// REBALANCE_IN_PROGRESS while it lags the group epoch, must revoke, or
// may now take partitions others released, and it rejoins. It must
// SyncGroup within its rebalance timeout after a JoinGroup and rejoin
// within it after a REBALANCE_IN_PROGRESS, and heartbeat within its
// session timeout, or it is removed.

// classicMeta is what a consumer group keeps of a classic member
// (ConsumerGroupMemberMetadataValue.ClassicMemberMetadata).
type classicMeta struct {
	sessionTimeout int32 // ms
	protocols      []protocol
}

func (a *classicMeta) equal(b *classicMeta) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.sessionTimeout == b.sessionTimeout && slices.EqualFunc(a.protocols, b.protocols, func(x, y protocol) bool {
		return x.name == y.name && string(x.metadata) == string(y.metadata)
	})
}

// supportsClassic is Kafka's ConsumerGroup.supportsClassicProtocols: the
// consumer protocol type, and a protocol every other classic member
// supports.
func (s *consumerState) supportsClassic(protocolType string, ps []protocol, memberID string) bool {
	if protocolType != consumerProtocolType || len(ps) == 0 {
		return false
	}
	for _, p := range ps {
		ok := true
		for id, m := range s.members {
			if id != memberID && m.classic != nil && !slices.ContainsFunc(m.classic.protocols, func(q protocol) bool { return q.name == p.name }) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// classicJoinConsumer handles a JoinGroup to a consumer group with
// members.
func (c *Coordinator) classicJoinConsumer(g *group, jr joinRequest) {
	s := g.cons
	asked, known := jr.memberID, jr.memberID != "" // errors answer the member id asked with
	if s.members[jr.memberID] == nil && (jr.instanceID == "" || s.staticMember(jr.instanceID) == nil) && len(s.members) >= c.cfg.ConsumerMaxSize {
		jr.reply(joinError(asked, kerr.GroupMaxSizeReached.Code))
		return
	}
	if !s.supportsClassic(jr.protocolType, jr.protocols, jr.memberID) {
		jr.reply(joinError(asked, kerr.InconsistentGroupProtocol.Code))
		return
	}
	if !known {
		jr.memberID = c.cfg.NewUUID()
	}
	if !known && jr.instanceID == "" && jr.version >= 4 {
		jr.reply(joinError(jr.memberID, kerr.MemberIDRequired.Code)) // KIP-394
		return
	}
	var sub kmsg.ConsumerMemberMetadata
	if err := sub.ReadFrom(jr.protocols[0].metadata); err != nil {
		jr.reply(joinError(asked, kerr.InconsistentGroupProtocol.Code))
		return
	}
	saved := s.clone()
	h := &hbCtx{client: jr.client, g: g}
	m, bump, code := c.classicMember(h, jr, known)
	if code != 0 {
		g.cons = saved
		jr.reply(joinError(asked, code))
		return
	}
	before := m.clone()
	if c.updateClassicMember(m, jr, &sub) {
		bump = true
	}
	c.writeMember(h, before, m, bump)
	c.dropUnusedRegexes(h)
	c.advance(h, before, m, bump, c.namedParts(sub.OwnedPartitions))
	if h.replaced != "" {
		if entries, finish := c.downgradeReplaced(h, saved, m); finish != nil {
			h.entries, h.downgrade = append(h.entries, entries...), finish
		}
	}
	if len(h.entries) > 0 { // a rejoin that changes nothing writes nothing
		if code := appendCode(c.append(h.entries), false); code != 0 {
			g.cons = saved
			jr.reply(joinError(asked, code))
			return
		}
	}
	if h.downgrade != nil {
		h.downgrade()
		jr.reply(classicJoinResponse(m))
		return
	}
	g.syncConsumerState(c.now)
	if h.replaced != "" {
		c.timers.cancel(consumerSessionKey(g.id, h.replaced))
		c.timers.cancel(consumerRevokeKey(g.id, h.replaced))
	}
	c.timers.set(consumerSessionKey(g.id, m.id), c.now.Add(time.Duration(m.classic.sessionTimeout)*time.Millisecond))
	c.timers.set(consumerRevokeKey(g.id, m.id), c.now.Add(time.Duration(m.rebalanceTimeout)*time.Millisecond)) // SyncGroup due
	jr.reply(classicJoinResponse(m))
}

// classicJoinResponse answers a classic member's JoinGroup to a consumer
// group: its member epoch as the generation, no leader, no members.
func classicJoinResponse(m *cmember) *kmsg.JoinGroupResponse {
	r := kmsg.NewPtrJoinGroupResponse()
	r.MemberID, r.Generation = m.id, m.epoch
	r.ProtocolType, r.Protocol = nullable(consumerProtocolType), nullable(m.classic.protocols[0].name)
	r.Members = []kmsg.JoinGroupResponseMember{}
	return r
}

// classicMember finds or adds the joining classic member; bump reports
// a new one. A static member joining without a member id replaces the
// member of its instance id, which keeps its assignment (KIP-345).
func (c *Coordinator) classicMember(h *hbCtx, jr joinRequest, known bool) (*cmember, bool, int16) {
	s := h.g.cons
	if jr.instanceID != "" {
		old := s.staticMember(jr.instanceID)
		switch {
		case old != nil && old.id == jr.memberID:
			return old, false, 0
		case old != nil && !known:
			m := old.clone()
			m.id, m.epoch, m.prevEpoch, h.fresh = jr.memberID, 0, 0, true
			h.entries = append(h.entries, memberTombstones(h.g.id, old.id)...)
			delete(s.members, old.id)
			s.members[m.id] = m
			s.target[m.id] = s.target[old.id]
			delete(s.target, old.id)
			h.entries = append(h.entries, entry{cgKey(cgTargetMemberKey, h.g.id, m.id), cgTargetMemberValue(s.target[m.id])})
			h.replaced = old.id // its timers stop once the records are written
			return m, false, 0
		case old != nil:
			return nil, false, kerr.FencedInstanceID.Code
		case known:
			return nil, false, kerr.UnknownMemberID.Code
		}
	}
	if m := s.members[jr.memberID]; m != nil {
		return m, false, 0
	}
	m := &cmember{id: jr.memberID, assigned: partSet{}, revoking: partSet{}, epoch: joinEpoch}
	s.members[m.id] = m
	return m, true, 0
}

// updateClassicMember applies a JoinGroup; it reports whether the
// subscription changed.
func (c *Coordinator) updateClassicMember(m *cmember, jr joinRequest, sub *kmsg.ConsumerMemberMetadata) bool {
	m.instanceID, m.clientID, m.clientHost = jr.instanceID, jr.client.ID, jr.client.Host
	if sub.Rack != nil {
		m.rackID = *sub.Rack
	}
	m.rebalanceTimeout = jr.rebalance
	m.classic = &classicMeta{sessionTimeout: jr.session, protocols: jr.protocols}
	topics := slices.Clone(sub.Topics)
	slices.Sort(topics)
	topics = slices.Compact(topics)
	changed := !slices.Equal(topics, m.topics)
	m.topics = topics
	return changed
}

// namedParts converts partitions named by topic to a set by topic id,
// leaving out topics that do not exist.
func (c *Coordinator) namedParts(ts []kmsg.ConsumerMemberMetadataOwnedPartition) partSet {
	out := partSet{}
	for _, t := range ts {
		if c.cfg.Topics == nil {
			break
		}
		if info, ok := c.cfg.Topics.TopicByName(t.Topic); ok {
			for _, p := range t.Partitions {
				out.add(info.ID, p)
			}
		}
	}
	return out
}

// classicMemberOf finds the classic member a Sync, Heartbeat or Leave
// names (Kafka's validateConsumerGroupMember and
// throwIfMemberDoesNotUseClassicProtocol).
func classicMemberOf(s *consumerState, memberID string, instanceID *string) (*cmember, int16) {
	var m *cmember
	if instanceID == nil {
		m = s.members[memberID]
	} else {
		m = s.staticMember(*instanceID)
		if m != nil && memberID != "" && m.id != memberID {
			return nil, kerr.FencedInstanceID.Code
		}
	}
	if m == nil || m.classic == nil {
		return nil, kerr.UnknownMemberID.Code
	}
	return m, 0
}

// mustRejoin: the member lags the group epoch, must revoke, or may take
// partitions others released (Kafka's classic heartbeat to a consumer
// group).
func (s *consumerState) mustRejoin(m *cmember) bool {
	if m.epoch < s.epoch || m.state == memberUnrevoked {
		return true
	}
	if m.state != memberUnreleased {
		return false
	}
	held := s.owners(m.id)
	for p := range s.target[m.id] {
		if _, taken := held[p]; taken && !m.assigned.has(p) {
			return false // still waiting
		}
	}
	return true
}

// classicSyncConsumer handles a SyncGroup to a consumer group.
func (c *Coordinator) classicSyncConsumer(g *group, req *kmsg.SyncGroupRequest, reply SyncReply) {
	s := g.cons
	m, code := classicMemberOf(s, req.MemberID, req.InstanceID)
	switch {
	case code != 0:
	case req.Generation != m.epoch:
		code = kerr.IllegalGeneration.Code
	case req.ProtocolType != nil && *req.ProtocolType != consumerProtocolType,
		req.Protocol != nil && *req.Protocol != m.classic.protocols[0].name:
		code = kerr.InconsistentGroupProtocol.Code
	case s.epoch > m.epoch && m.state != memberUnrevoked:
		c.armRejoin(g, m)
		code = kerr.RebalanceInProgress.Code
	}
	if code != 0 {
		reply(syncError(code))
		return
	}
	c.timers.cancel(consumerRevokeKey(g.id, m.id))
	c.timers.set(consumerSessionKey(g.id, m.id), c.now.Add(time.Duration(m.classic.sessionTimeout)*time.Millisecond))
	r := kmsg.NewPtrSyncGroupResponse()
	r.ProtocolType, r.Protocol = req.ProtocolType, req.Protocol
	r.MemberAssignment = c.classicAssignment(m)
	reply(r)
}

// armRejoin gives a classic member its rebalance timeout to rejoin, if
// it does not already have a deadline.
func (c *Coordinator) armRejoin(g *group, m *cmember) {
	if !c.timers.pending(consumerRevokeKey(g.id, m.id)) {
		c.timers.set(consumerRevokeKey(g.id, m.id), c.now.Add(time.Duration(m.rebalanceTimeout)*time.Millisecond))
	}
}

// classicAssignment encodes the partitions m holds as a consumer
// protocol assignment, in the version of its subscription.
func (c *Coordinator) classicAssignment(m *cmember) []byte {
	return c.encodeAssignment(m.assigned, m.classic.protocols[0].metadata)
}

// classicHeartbeatConsumer handles a Heartbeat to a consumer group.
func (c *Coordinator) classicHeartbeatConsumer(g *group, req *kmsg.HeartbeatRequest) int16 {
	m, code := classicMemberOf(g.cons, req.MemberID, req.InstanceID)
	if code != 0 {
		return code
	}
	if req.Generation != m.epoch {
		return kerr.IllegalGeneration.Code
	}
	c.timers.set(consumerSessionKey(g.id, m.id), c.now.Add(time.Duration(m.classic.sessionTimeout)*time.Millisecond))
	if g.cons.mustRejoin(m) {
		c.armRejoin(g, m)
		return kerr.RebalanceInProgress.Code
	}
	return 0
}

// classicLeaveConsumer handles a LeaveGroup to a consumer group: the
// classic members named leave, and the group epoch bumps once.
func (c *Coordinator) classicLeaveConsumer(g *group, leaving []kmsg.LeaveGroupRequestMember) []kmsg.LeaveGroupResponseMember {
	saved := g.cons.clone()
	h := &hbCtx{g: g}
	var out []kmsg.LeaveGroupResponseMember
	var gone []string
	for _, lm := range leaving {
		r := kmsg.NewLeaveGroupResponseMember()
		r.MemberID, r.InstanceID = lm.MemberID, lm.InstanceID
		m, code := classicMemberOf(g.cons, lm.MemberID, lm.InstanceID)
		if code == 0 {
			r.MemberID = m.id
			h.entries = append(h.entries, memberTombstones(g.id, m.id)...)
			delete(g.cons.members, m.id)
			delete(g.cons.target, m.id)
			gone = append(gone, m.id)
		}
		r.ErrorCode = code
		out = append(out, r)
	}
	if len(gone) == 0 {
		return out
	}
	c.dropUnusedRegexes(h)
	c.bumpEpoch(h, metadataHash(g.cons.subscribedTopics(), c.cfg.Topics))
	if code := appendCode(c.append(h.entries), false); code != 0 {
		g.cons = saved
		for i := range out {
			if out[i].ErrorCode == 0 {
				out[i].ErrorCode = code
			}
		}
		return out
	}
	for _, id := range gone {
		c.timers.cancel(consumerSessionKey(g.id, id))
		c.timers.cancel(consumerRevokeKey(g.id, id))
		c.cfg.Logger.Info("classic member left the consumer group", "group", g.id, "member", id)
	}
	g.syncConsumerState(c.now)
	return out
}
