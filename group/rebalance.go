package group

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The rebalance: PreparingRebalance parks JoinGroups until every member
// rejoined (or the rebalance timeout), then a new generation starts in
// CompletingRebalance and the leader's SyncGroup makes it Stable.

// maybePrepareRebalance starts a rebalance unless one is running.
func (c *Coordinator) maybePrepareRebalance(g *group, reason string) {
	if g.canRebalance() {
		c.prepareRebalance(g, reason)
	}
}

// prepareRebalance moves g to PreparingRebalance (Kafka's
// prepareRebalance). An Empty group waits group.initial.rebalance.delay.ms
// first, and again for each new member, up to its rebalance timeout, so
// that a starting application's members land in one generation.
func (c *Coordinator) prepareRebalance(g *group, reason string) {
	if g.is(CompletingRebalance) {
		c.resetAndPropagate(g, kerr.RebalanceInProgress.Code)
	}
	c.timers.cancel(syncKey(g.id))
	jt := &joinTimer{delay: g.rebalanceTimeout()}
	if g.is(Empty) {
		d := c.cfg.InitialRebalanceDelay
		jt = &joinTimer{initial: true, delay: d, remaining: max(g.rebalanceTimeout()-d, 0)}
	}
	c.logTransition(g, PreparingRebalance)
	c.cfg.Logger.Info("preparing to rebalance group", "group", g.id, "generation", g.generation,
		"partition", c.partition, "reason", reason)
	c.armJoin(g, jt)
}

func (c *Coordinator) armJoin(g *group, jt *joinTimer) {
	g.join = jt
	c.timers.set(joinKey(g.id), c.now.Add(jt.delay))
	c.tryCompleteJoin(g)
}

// tryCompleteJoin completes the rebalance at once when every member
// rejoined (the purgatory's checkAndComplete). The initial delay never
// completes early.
func (c *Coordinator) tryCompleteJoin(g *group) {
	if g.join == nil || g.join.initial || !g.allJoined() {
		return
	}
	c.timers.cancel(joinKey(g.id))
	g.join = nil
	c.completeJoin(g)
}

// expireJoin: the rebalance timeout, or one step of the initial delay,
// passed.
func (c *Coordinator) expireJoin(g *group) {
	jt := g.join
	if jt == nil {
		return
	}
	if jt.initial && g.newMemberAdded && jt.remaining != 0 {
		g.newMemberAdded = false
		next := &joinTimer{initial: true, delay: min(c.cfg.InitialRebalanceDelay, jt.remaining),
			remaining: max(jt.remaining-jt.delay, 0)}
		c.armJoin(g, next)
		return
	}
	g.join = nil
	c.completeJoin(g)
}

// completeJoin ends PreparingRebalance (Kafka's onCompleteJoin): dynamic
// members that did not rejoin are dropped, and the next generation
// starts, or the group waits another rebalance timeout if nobody
// rejoined but static members remain.
func (c *Coordinator) completeJoin(g *group) {
	for _, id := range slices.Clone(g.order) {
		if m := g.members[id]; !m.awaitingJoin() && !m.static() {
			c.cfg.Logger.Info("removing member that did not rejoin", "group", g.id, "member", id)
			g.remove(id)
			c.timers.cancel(heartbeatKey(g.id, id))
		}
	}
	if g.is(Dead) {
		return
	}
	if !g.electJoinedLeader() && len(g.members) > 0 {
		c.armJoin(g, &joinTimer{delay: g.rebalanceTimeout()})
		return
	}
	c.initNextGeneration(g)
	if g.is(Empty) {
		if code := c.storeGroup(g, nil); code != 0 {
			// The previous generation on disk has no live member either.
			c.cfg.Logger.Warn("writing an empty group failed", "group", g.id, "err", kerr.ErrorForCode(code))
		}
		return
	}
	c.cfg.Logger.Info("stabilized group", "group", g.id, "generation", g.generation,
		"partition", c.partition, "members", len(g.members))
	for _, id := range slices.Clone(g.order) {
		m := g.members[id]
		g.answerJoin(m, c.joinResult(g, m, g.isLeader(id), false))
		c.scheduleHeartbeat(g, m)
		m.isNew = false
		g.toSync[id] = true
	}
	c.timers.set(syncKey(g.id), c.now.Add(g.rebalanceTimeout()))
}

// initNextGeneration starts a generation: CompletingRebalance with a
// selected protocol, or Empty without members.
func (c *Coordinator) initNextGeneration(g *group) {
	g.generation++
	if len(g.members) > 0 {
		g.protocol = g.selectProtocol()
		c.logTransition(g, CompletingRebalance)
	} else {
		g.protocol = ""
		c.logTransition(g, Empty)
	}
	g.subscribed = g.computeSubscribed()
	g.toSync = map[string]bool{}
	c.timers.cancel(syncKey(g.id))
}

// scheduleHeartbeat restarts m's session timeout.
func (c *Coordinator) scheduleHeartbeat(g *group, m *member) {
	c.timers.set(heartbeatKey(g.id, m.id), c.now.Add(time.Duration(m.sessionTimeout)*time.Millisecond))
}

// expireHeartbeat: m's session timeout passed without a heartbeat.
func (c *Coordinator) expireHeartbeat(g *group, id string) {
	m := g.members[id]
	if m == nil || m.heartbeatSatisfied() {
		return
	}
	c.cfg.Logger.Info("member failed to heartbeat; removing it", "group", g.id, "member", id,
		"session_timeout_ms", m.sessionTimeout)
	c.removeMemberAndUpdate(g, m, "removing member "+id+" on heartbeat expiration")
}

// expirePending: a member told MEMBER_ID_REQUIRED never came back.
func (c *Coordinator) expirePending(g *group, id string) {
	if g.pending[id] {
		c.cfg.Logger.Info("pending member expired", "group", g.id, "member", id)
		c.removePendingAndUpdate(g, id)
	}
}

// expireSync: members that got their JoinGroup response but never sent
// SyncGroup within the rebalance timeout are removed and the group
// rebalances (Kafka's onExpirePendingSync).
func (c *Coordinator) expireSync(g *group) {
	if !(g.is(CompletingRebalance) || g.is(Stable)) || len(g.toSync) == 0 {
		return
	}
	ids := make([]string, 0, len(g.toSync))
	for id := range g.toSync {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if m := g.members[id]; m != nil {
			g.answerJoin(m, joinError(id, kerr.UnknownMemberID.Code))
		}
		g.remove(id)
		c.timers.cancel(heartbeatKey(g.id, id))
	}
	c.prepareRebalance(g, "members did not send SyncGroup in time")
}

// removeMemberAndUpdate removes a member that left or failed and moves
// the group on (Kafka's removeMemberAndUpdateGroup).
func (c *Coordinator) removeMemberAndUpdate(g *group, m *member, reason string) {
	g.answerJoin(m, joinError("", kerr.UnknownMemberID.Code))
	g.answerSync(m, syncError(kerr.UnknownMemberID.Code))
	g.remove(m.id)
	c.timers.cancel(heartbeatKey(g.id, m.id))
	switch g.state {
	case Stable, CompletingRebalance:
		c.maybePrepareRebalance(g, reason)
	case PreparingRebalance:
		c.tryCompleteJoin(g)
	}
}

func (c *Coordinator) removePendingAndUpdate(g *group, id string) {
	g.remove(id)
	c.timers.cancel(pendingKey(g.id, id))
	if g.is(PreparingRebalance) {
		c.tryCompleteJoin(g)
	}
}

// resetAndPropagate clears every assignment and answers parked
// SyncGroups with code.
func (c *Coordinator) resetAndPropagate(g *group, code int16) {
	for _, m := range g.members {
		m.assignment = nil
		g.forceSettle(m)
	}
	c.propagate(g, code)
}

// propagate answers every parked SyncGroup with the member's assignment
// (or code) and restarts its session timeout.
func (c *Coordinator) propagate(g *group, code int16) {
	for _, id := range slices.Clone(g.order) {
		m := g.members[id]
		if !m.awaitingSync() {
			continue
		}
		resp := syncError(code)
		if code == 0 {
			resp = syncResult(g, m)
		}
		g.answerSync(m, resp)
		c.scheduleHeartbeat(g, m)
	}
}

// syncResult is a successful SyncGroup response for m.
func syncResult(g *group, m *member) *kmsg.SyncGroupResponse {
	r := kmsg.NewPtrSyncGroupResponse()
	r.ProtocolType, r.Protocol = nullable(g.protocolType), nullable(g.protocol)
	r.MemberAssignment = m.assignment
	if r.MemberAssignment == nil {
		r.MemberAssignment = []byte{}
	}
	return r
}
