package group

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// hbCtx is one ConsumerGroupHeartbeat in progress: the records it will
// write and the state to put back if writing them fails.
type hbCtx struct {
	req     *kmsg.ConsumerGroupHeartbeatRequest
	client  Client
	g       *group
	undo    func()
	entries []entry
	fresh   bool // the member's records must be written whether or not it changed
	// upgraded: the heartbeat turns a classic group with members into a
	// consumer group (consumer_migrate.go).
	upgraded bool
	// downgrade, if set, turns the group back into a classic group once
	// the heartbeat's records are written (consumer_migrate.go).
	downgrade func()
	// replaced is the static member a classic one replaced (consumer_classic.go).
	replaced string
}

// ConsumerHeartbeat handles ConsumerGroupHeartbeat (KIP-848, Kafka's
// GroupMetadataManager.consumerGroupHeartbeat): a member joins with
// epoch 0, heartbeats with its epoch, leaves with -1 (or -2 for a
// static member that will be back). Each heartbeat may bump the group
// epoch (new member, changed subscription, changed topic metadata),
// recompute the target assignment, and move the member one step
// towards its target. Its records are written as one batch; if that
// fails nothing changes and the member is told the error.
func (c *Coordinator) ConsumerHeartbeat(now time.Time, req *kmsg.ConsumerGroupHeartbeatRequest, client Client) *kmsg.ConsumerGroupHeartbeatResponse {
	c.now = now
	resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
	code, msg := c.validateHeartbeat(req)
	if code == 0 {
		code = c.check(req.Group, kmsg.ConsumerGroupHeartbeat)
	}
	if code != 0 {
		resp.ErrorCode, resp.ErrorMessage = code, nullable(msg)
		return resp
	}
	if req.Version == 0 && req.MemberEpoch == joinEpoch && req.MemberID == "" {
		req.MemberID = c.cfg.NewUUID() // v1 clients make their own
	}
	h := &hbCtx{req: req, client: client}
	var m *cmember
	if req.MemberEpoch == leaveEpoch || req.MemberEpoch == staticLeaveEpoch {
		m, code, msg = c.consumerLeave(h)
	} else {
		m, code, msg = c.consumerJoinOrBeat(h)
	}
	if code == 0 && len(h.entries) > 0 {
		code = appendCode(c.append(h.entries), false)
	}
	if code != 0 {
		if h.undo != nil {
			h.undo()
		}
		resp.ErrorCode, resp.ErrorMessage = code, nullable(msg)
		return resp
	}
	if h.upgraded {
		c.finishUpgrade(h.g)
	}
	if h.downgrade != nil {
		h.downgrade()
	}
	return c.heartbeatResponse(h, m, resp)
}

// validateHeartbeat is Kafka's throwIfConsumerGroupHeartbeatRequestIsInvalid.
func (c *Coordinator) validateHeartbeat(req *kmsg.ConsumerGroupHeartbeatRequest) (int16, string) {
	bad := kerr.InvalidRequest.Code
	switch {
	case req.Group == "":
		return bad, "GroupId can't be empty."
	case req.Version >= 1 && req.MemberID == "":
		return bad, "MemberId can't be empty."
	case req.InstanceID != nil && *req.InstanceID == "":
		return bad, "InstanceId can't be empty."
	case req.RackID != nil && *req.RackID == "":
		return bad, "RackId can't be empty."
	case req.MemberEpoch < staticLeaveEpoch:
		return bad, "MemberEpoch is invalid."
	case req.MemberEpoch == staticLeaveEpoch && req.InstanceID == nil:
		return bad, "InstanceId can't be null when leaving as a static member."
	case req.MemberEpoch == joinEpoch && req.RebalanceTimeoutMillis == -1:
		return bad, "RebalanceTimeoutMs must be provided in first request."
	case req.MemberEpoch == joinEpoch && (req.Topics == nil || len(req.Topics) > 0):
		return bad, "TopicPartitions must be empty when (re-)joining."
	case req.MemberEpoch == joinEpoch && req.SubscribedTopicNames == nil && req.SubscribedTopicRegex == nil:
		return bad, "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining."
	case req.ServerAssignor != nil && !slices.Contains(c.cfg.ConsumerAssignors, *req.ServerAssignor):
		return kerr.UnsupportedAssignor.Code, "ServerAssignor " + *req.ServerAssignor + " is not supported."
	case req.SubscribedTopicRegex != nil && *req.SubscribedTopicRegex != "":
		return checkRegex(*req.SubscribedTopicRegex)
	}
	return 0, ""
}

// consumerGroup finds the consumer group of a heartbeat, creating it for
// a joining member. An empty classic group (one that only stores
// offsets) becomes a consumer group, keeping its offsets, as Kafka's
// online upgrade of an empty group does; a classic group with members
// is upgraded if group.consumer.migration.policy allows
// (consumer_migrate.go), else refused.
func (c *Coordinator) consumerGroup(h *hbCtx) (int16, string) {
	id, create := h.req.Group, h.req.MemberEpoch == joinEpoch
	g := c.groups[id]
	switch {
	case g == nil && !create:
		return kerr.GroupIDNotFound.Code, "Group " + id + " not found."
	case g == nil:
		g = newGroup(id, c.now, c.bounds)
		g.cons, g.protocolType = newConsumerState(), consumerProtocolType
		c.groups[id] = g
		h.undo = func() { delete(c.groups, id) }
	case g.cons == nil && create && len(g.members) > 0 && !g.is(Dead):
		if code, msg := c.upgradeClassic(h, g); code != 0 {
			return code, msg
		}
	case g.cons == nil && (!create || len(g.members) > 0 || g.is(Dead)):
		return kerr.GroupIDNotFound.Code, "Group " + id + " is not a consumer group."
	case g.cons == nil:
		prevType, prevState := g.protocolType, g.state
		if g.protocolType != "" {
			h.entries = append(h.entries, entry{key: groupKey(id)})
		}
		g.cons, g.protocolType, g.state = newConsumerState(), consumerProtocolType, Empty
		h.undo = func() { g.cons, g.protocolType, g.state = nil, prevType, prevState }
	default:
		saved := g.cons.clone()
		h.undo = func() { g.cons = saved }
	}
	h.g = g
	return 0, ""
}

// consumerJoinOrBeat handles a heartbeat of a joining or current member.
func (c *Coordinator) consumerJoinOrBeat(h *hbCtx) (*cmember, int16, string) {
	if code, msg := c.consumerGroup(h); code != 0 {
		return nil, code, msg
	}
	m, bump, code, msg := c.findMember(h)
	if code != 0 {
		return nil, code, msg
	}
	before := m.clone()
	if c.updateMember(h, m) {
		bump = true
	}
	c.writeMember(h, before, m, bump)
	c.refreshRegexes(h)
	var owned partSet
	if h.req.Topics != nil {
		owned = partSet{}
		for _, t := range h.req.Topics {
			for _, p := range t.Partitions {
				owned.add(t.TopicID, p)
			}
		}
	}
	c.advance(h, before, m, bump, owned)
	return m, 0, ""
}

// writeMember records m's metadata if it changed (or must be written).
func (c *Coordinator) writeMember(h *hbCtx, before, m *cmember, bump bool) {
	if !sameMemberMetadata(before, m) || bump || h.fresh {
		h.entries = append(h.entries, entry{cgKey(cgMemberKey, h.g.id, m.id), cgMemberValue(m)})
	}
}

// advance bumps the group epoch if the membership, a subscription or
// the subscribed topics' metadata changed, recomputes the target if it
// lags, and moves m one step towards its target given what it owns
// (nil: not reported), recording its new assignment.
func (c *Coordinator) advance(h *hbCtx, before, m *cmember, bump bool, owned partSet) {
	s := h.g.cons
	hash := metadataHash(s.subscribedTopics(), c.cfg.Topics)
	if bump || hash != s.metadataHash {
		c.bumpEpoch(h, hash)
	}
	if s.epoch > s.assignmentEpoch {
		c.computeTarget(h)
	}
	reconcile(s, m, owned)
	if !sameAssignment(before, m) || bump || h.fresh {
		h.entries = append(h.entries, entry{cgKey(cgCurrentKey, h.g.id, m.id), cgCurrentValue(m)})
	}
}

// findMember returns the heartbeat's member, creating a joining one;
// bump reports a new member. Epochs are checked as Kafka's
// throwIfMemberEpochIsInvalid does: a member may repeat its previous
// epoch if the response that moved it on was lost and it owns nothing
// beyond its assignment.
func (c *Coordinator) findMember(h *hbCtx) (m *cmember, bump bool, code int16, msg string) {
	s, req := h.g.cons, h.req
	m = s.members[req.MemberID]
	if req.MemberEpoch != joinEpoch {
		switch {
		case m == nil, m.classic != nil:
			return nil, false, kerr.UnknownMemberID.Code, "Member " + req.MemberID + " is not a member of group " + req.Group + "."
		case req.MemberEpoch == m.epoch:
		case req.MemberEpoch < m.epoch && req.MemberEpoch == m.prevEpoch && ownedWithin(req.Topics, m.assigned):
		default:
			return nil, false, kerr.FencedMemberEpoch.Code, "The consumer group member has a smaller or larger member epoch than expected."
		}
		return m, false, 0, ""
	}
	if req.InstanceID != nil {
		if old := s.staticMember(*req.InstanceID); old != nil && old.id != req.MemberID {
			if old.epoch != staticLeaveEpoch {
				return nil, false, kerr.UnreleasedInstanceID.Code, "Static member " + *req.InstanceID + " is still in use."
			}
			return c.replaceStatic(h, old), false, 0, ""
		}
	}
	if m != nil {
		if m.epoch == staticLeaveEpoch { // a static member back under the same member id
			m.epoch, h.fresh = m.prevEpoch, true
		}
		return m, false, 0, ""
	}
	if len(s.members) >= c.cfg.ConsumerMaxSize {
		return nil, false, kerr.GroupMaxSizeReached.Code, "The consumer group has reached its maximum capacity."
	}
	m = &cmember{id: req.MemberID, assigned: partSet{}, revoking: partSet{}}
	s.members[m.id] = m
	return m, true, 0, ""
}

// replaceStatic gives a returning static member the place, epoch and
// assignment of its departed predecessor (KIP-345 in KIP-848): no
// rebalance.
func (c *Coordinator) replaceStatic(h *hbCtx, old *cmember) *cmember {
	s := h.g.cons
	m := old.clone()
	m.id, m.epoch, h.fresh = h.req.MemberID, old.prevEpoch, true
	h.entries = append(h.entries, memberTombstones(h.g.id, old.id)...)
	delete(s.members, old.id)
	s.members[m.id] = m
	s.target[m.id] = s.target[old.id]
	delete(s.target, old.id)
	h.entries = append(h.entries, entry{cgKey(cgTargetMemberKey, h.g.id, m.id), cgTargetMemberValue(s.target[m.id])})
	return m
}

// ownedWithin reports whether the partitions a heartbeat owns (nil:
// unchanged) are all in assigned.
func ownedWithin(topics []kmsg.ConsumerGroupHeartbeatRequestTopic, assigned partSet) bool {
	for _, t := range topics {
		for _, p := range t.Partitions {
			if !assigned.has(tidp{t.TopicID, p}) {
				return false
			}
		}
	}
	return true
}

// updateMember applies the heartbeat's fields; it reports whether the
// subscription or the assignor asked for changed.
func (c *Coordinator) updateMember(h *hbCtx, m *cmember) bool {
	req := h.req
	m.clientID, m.clientHost = h.client.ID, h.client.Host
	m.classic = nil // a member that joins with ConsumerGroupHeartbeat uses the consumer protocol
	if req.InstanceID != nil {
		m.instanceID = *req.InstanceID
	}
	if req.RackID != nil {
		m.rackID = *req.RackID
	}
	if req.RebalanceTimeoutMillis != -1 {
		m.rebalanceTimeout = req.RebalanceTimeoutMillis
	}
	changed := false
	if req.SubscribedTopicNames != nil {
		topics := slices.Clone(req.SubscribedTopicNames)
		slices.Sort(topics)
		topics = slices.Compact(topics)
		changed = !slices.Equal(topics, m.topics)
		m.topics = topics
	}
	if req.SubscribedTopicRegex != nil && *req.SubscribedTopicRegex != m.regex {
		m.regex, changed = *req.SubscribedTopicRegex, true
	}
	if req.ServerAssignor != nil && *req.ServerAssignor != m.assignor {
		m.assignor, changed = *req.ServerAssignor, true
	}
	return changed
}

func sameMemberMetadata(a, b *cmember) bool {
	return a.instanceID == b.instanceID && a.rackID == b.rackID && a.clientID == b.clientID &&
		a.clientHost == b.clientHost && slices.Equal(a.topics, b.topics) && a.regex == b.regex && a.assignor == b.assignor && a.classic.equal(b.classic) &&
		a.rebalanceTimeout == b.rebalanceTimeout
}

func sameAssignment(a, b *cmember) bool {
	return a.epoch == b.epoch && a.prevEpoch == b.prevEpoch && a.state == b.state &&
		a.assigned.equal(b.assigned) && a.revoking.equal(b.revoking)
}

// bumpEpoch moves the group to its next epoch.
func (c *Coordinator) bumpEpoch(h *hbCtx, hash int64) {
	s := h.g.cons
	s.epoch++
	s.metadataHash = hash
	h.entries = append(h.entries, entry{cgKey(cgMetadataKey, h.g.id), cgMetadataValue(s.epoch, hash)})
}

// computeTarget runs the group's assignor and records the members whose
// target changed, then the target's epoch.
func (c *Coordinator) computeTarget(h *hbCtx) {
	s := h.g.cons
	spec := assignSpec{members: s.memberIDs(), subs: map[string][]string{}, prev: s.target, topics: c.cfg.Topics}
	for id, m := range s.members {
		spec.subs[id] = s.memberTopics(m)
	}
	if spec.topics == nil {
		spec.topics = noTopics{}
	}
	target := assignors[c.groupAssignor(s)](spec)
	for _, id := range spec.members {
		if old, ok := s.target[id]; !ok || !old.equal(target[id]) {
			h.entries = append(h.entries, entry{cgKey(cgTargetMemberKey, h.g.id, id), cgTargetMemberValue(target[id])})
		}
	}
	s.target, s.assignmentEpoch = target, s.epoch
	h.entries = append(h.entries, entry{cgKey(cgTargetMetadataKey, h.g.id), cgTargetMetadataValue(s.epoch)})
}

// groupAssignor is the assignor most members ask for (ties: the earlier
// in group.consumer.assignors), or the first configured one.
func (c *Coordinator) groupAssignor(s *consumerState) string {
	votes := map[string]int{}
	for _, m := range s.members {
		if m.assignor != "" {
			votes[m.assignor]++
		}
	}
	best := c.cfg.ConsumerAssignors[0]
	for _, a := range c.cfg.ConsumerAssignors {
		if votes[a] > votes[best] {
			best = a
		}
	}
	return best
}

type noTopics struct{}

func (noTopics) TopicByName(string) (TopicInfo, bool) { return TopicInfo{}, false }
func (noTopics) TopicByID(TopicID) (TopicInfo, bool)  { return TopicInfo{}, false }
func (noTopics) TopicNames() ([]string, int64)        { return nil, 0 }
func (noTopics) TopicsVersion() int64                 { return 0 }

// reconcile moves m one step towards its target (Kafka's
// CurrentAssignmentBuilder): a member first revokes what the target
// takes away and keeps its epoch meanwhile; once it owns nothing it must
// give up (owned, from its heartbeat; nil: not reported) it moves to the
// target's epoch and gets the target's partitions that no other member
// still holds, the rest when they are released.
func reconcile(s *consumerState, m *cmember, owned partSet) {
	if m.epoch == staticLeaveEpoch {
		return
	}
	switch m.state {
	case memberUnrevoked:
		if owned == nil || owned.intersects(m.revoking) {
			return
		}
		m.revoking = partSet{}
	case memberStable:
		if m.epoch == s.assignmentEpoch {
			return
		}
	}
	target := s.target[m.id]
	if revoke := m.assigned.minus(target); len(revoke) > 0 {
		m.assigned, m.revoking, m.state = m.assigned.and(target), revoke, memberUnrevoked
		return
	}
	held := s.owners(m.id)
	next, waiting := m.assigned.clone(), false
	for p := range target {
		if _, taken := held[p]; taken {
			waiting = true
			continue
		}
		next[p] = struct{}{}
	}
	if m.epoch != s.assignmentEpoch {
		m.prevEpoch, m.epoch = m.epoch, s.assignmentEpoch
	}
	m.assigned, m.state = next, memberStable
	if waiting {
		m.state = memberUnreleased
	}
}

// consumerLeave handles epoch -1 (the member leaves: its partitions are
// reassigned) and -2 (a static member leaves for a while: it keeps its
// assignment until it returns or its session times out).
func (c *Coordinator) consumerLeave(h *hbCtx) (*cmember, int16, string) {
	if code, msg := c.consumerGroup(h); code != 0 {
		return nil, code, msg
	}
	s, req := h.g.cons, h.req
	m := s.members[req.MemberID]
	if req.InstanceID != nil {
		m = s.staticMember(*req.InstanceID)
	}
	if m == nil {
		return nil, kerr.UnknownMemberID.Code, "Member " + req.MemberID + " is not a member of group " + req.Group + "."
	}
	if req.MemberEpoch == staticLeaveEpoch {
		m.prevEpoch, m.epoch = m.epoch, staticLeaveEpoch
		h.entries = append(h.entries, entry{cgKey(cgCurrentKey, h.g.id, m.id), cgCurrentValue(m)})
		return m, 0, ""
	}
	if downgrade, finish := c.downgradeConsumer(h, m.id); finish != nil {
		h.entries, h.downgrade = append(h.entries, downgrade...), finish
	} else {
		c.removeMember(h, m)
	}
	return &cmember{id: m.id, epoch: leaveEpoch}, 0, ""
}

// removeMember drops m and bumps the group epoch so that its partitions
// are reassigned.
func (c *Coordinator) removeMember(h *hbCtx, m *cmember) {
	s := h.g.cons
	h.entries = append(h.entries, memberTombstones(h.g.id, m.id)...)
	delete(s.members, m.id)
	delete(s.target, m.id)
	c.dropUnusedRegexes(h)
	c.bumpEpoch(h, metadataHash(s.subscribedTopics(), c.cfg.Topics))
}

// memberTombstones delete a member's records: current assignment,
// target assignment and metadata, in Kafka's order.
func memberTombstones(groupID, memberID string) []entry {
	return []entry{{key: cgKey(cgCurrentKey, groupID, memberID)}, {key: cgKey(cgTargetMemberKey, groupID, memberID)},
		{key: cgKey(cgMemberKey, groupID, memberID)}}
}

// heartbeatResponse answers a heartbeat that was applied, and (re)starts
// the member's session and, while it revokes, its rebalance timeout.
func (c *Coordinator) heartbeatResponse(h *hbCtx, m *cmember, resp *kmsg.ConsumerGroupHeartbeatResponse) *kmsg.ConsumerGroupHeartbeatResponse {
	g := h.g
	g.syncConsumerState(c.now)
	resp.MemberID, resp.MemberEpoch = &m.id, m.epoch
	resp.HeartbeatIntervalMillis = int32(c.cfg.ConsumerHeartbeatInterval.Milliseconds())
	if m.epoch == leaveEpoch {
		c.timers.cancel(consumerSessionKey(g.id, m.id))
		c.timers.cancel(consumerRevokeKey(g.id, m.id))
		return resp
	}
	c.timers.set(consumerSessionKey(g.id, m.id), c.now.Add(c.cfg.ConsumerSessionTimeout))
	if m.state == memberUnrevoked {
		if !c.timers.pending(consumerRevokeKey(g.id, m.id)) {
			c.timers.set(consumerRevokeKey(g.id, m.id), c.now.Add(time.Duration(m.rebalanceTimeout)*time.Millisecond))
		}
	} else {
		c.timers.cancel(consumerRevokeKey(g.id, m.id))
	}
	if m.epoch == staticLeaveEpoch {
		return resp
	}
	if h.req.MemberEpoch == joinEpoch || len(h.entries) > 0 || h.req.Topics != nil && !ownedEquals(h.req.Topics, m.assigned) {
		a := kmsg.NewConsumerGroupHeartbeatResponseAssignment()
		for _, t := range m.assigned.byTopic() {
			rt := kmsg.NewConsumerGroupHeartbeatResponseAssignmentTopic()
			rt.TopicID, rt.Partitions = t.id, t.partitions
			a.Topics = append(a.Topics, rt)
		}
		resp.Assignment = &a
	}
	return resp
}

func ownedEquals(topics []kmsg.ConsumerGroupHeartbeatRequestTopic, assigned partSet) bool {
	n := 0
	for _, t := range topics {
		n += len(t.Partitions)
	}
	return n == len(assigned) && ownedWithin(topics, assigned)
}

// syncConsumerState keeps the classic fields a consumer group shares
// with classic groups (state for offsets expiry and deletion, the
// subscribed topics) in step with its members.
func (g *group) syncConsumerState(now time.Time) {
	if g.cons == nil {
		return
	}
	switch {
	case len(g.cons.members) == 0 && g.state != Empty:
		g.state, g.stateTime = Empty, now
	case len(g.cons.members) > 0:
		g.state = Stable
	}
	g.subscribed = map[string]bool{}
	for _, t := range g.cons.subscribedTopics() {
		g.subscribed[t] = true
	}
}

// expireConsumerMember fences a member whose session timed out, or that
// did not revoke within its rebalance timeout (Kafka's
// consumerGroupSessionTimeout / rebalance timeout).
func (c *Coordinator) expireConsumerMember(g *group, memberID string, revoke bool) {
	if g.cons == nil || g.cons.members[memberID] == nil {
		return
	}
	m := g.cons.members[memberID]
	if revoke && m.classic == nil && m.state != memberUnrevoked { // a classic member's deadline is its JoinGroup's or SyncGroup's
		return
	}
	saved := g.cons.clone()
	h := &hbCtx{g: g}
	downgrade, finish := c.downgradeConsumer(h, memberID)
	if finish != nil {
		h.entries = downgrade
	} else {
		c.removeMember(h, m)
	}
	if err := c.append(h.entries); err != nil {
		g.cons = saved // retried at the next deadline
		c.timers.set(consumerSessionKey(g.id, memberID), c.now.Add(c.cfg.ConsumerHeartbeatInterval))
		return
	}
	c.timers.cancel(consumerSessionKey(g.id, memberID))
	c.timers.cancel(consumerRevokeKey(g.id, memberID))
	c.cfg.Logger.Info("consumer group member fenced", "group", g.id, "member", memberID, "rebalance_timeout", revoke)
	if finish != nil {
		finish()
		return
	}
	g.syncConsumerState(c.now)
}

func (s *consumerState) clone() *consumerState {
	out := *s
	out.members = make(map[string]*cmember, len(s.members))
	for id, m := range s.members {
		out.members[id] = m.clone()
	}
	out.target = make(map[string]partSet, len(s.target))
	for id, t := range s.target {
		out.target[id] = t
	}
	out.regexes = make(map[string]*resolvedRegex, len(s.regexes))
	for expr, r := range s.regexes {
		out.regexes[expr] = r
	}
	return &out
}
