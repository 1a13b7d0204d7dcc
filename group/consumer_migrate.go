package group

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Online upgrade of a classic group with members to a consumer group
// (Kafka's GroupMetadataManager.validateOnlineUpgrade and
// convertToConsumerGroup, ConsumerGroup.fromClassicGroup), under
// group.consumer.migration.policy. When a member joins a classic
// consumer group by ConsumerGroupHeartbeat, the group becomes a
// consumer group: its classic members stay, as classic members, at the
// member epoch of the classic generation with the assignment they had,
// which is also their target; the group epoch and the target's epoch
// are that generation. The classic group's record is deleted and the
// consumer group's are written, in Kafka's order, in the batch of the
// joining heartbeat. Parked JoinGroup and SyncGroup requests are
// answered REBALANCE_IN_PROGRESS, so their members rejoin the consumer
// group. A group whose members' metadata is not the consumer protocol's
// is not upgraded (GROUP_ID_NOT_FOUND, as Kafka answers).

// Migration policies (group.consumer.migration.policy).
const (
	MigrationDisabled      = "disabled"
	MigrationUpgrade       = "upgrade"
	MigrationDowngrade     = "downgrade"
	MigrationBidirectional = "bidirectional" // the default
)

func migrationAllows(policy, way string) bool {
	p := strings.ToLower(policy)
	return p == MigrationBidirectional || p == way
}

// upgradeRefusal is why a classic group may not become a consumer group
// now (Kafka's validateOnlineUpgrade), "" if it may.
func (c *Coordinator) upgradeRefusal(g *group) string {
	switch {
	case !migrationAllows(c.cfg.MigrationPolicy, MigrationUpgrade):
		return "the online upgrade is disabled"
	case g.is(Dead):
		return "the group is dead"
	case g.protocolType != consumerProtocolType:
		return "the group does not use the consumer embedded protocol"
	case len(g.members) > c.cfg.ConsumerMaxSize:
		return "the group size exceeds the consumer group maximum size"
	}
	return ""
}

// upgradeClassic turns classic group g, which has members, into a
// consumer group for heartbeat h. Nothing of the classic group changes
// until the heartbeat's records are written: h.undo puts the group back,
// finishUpgrade clears the classic state.
func (c *Coordinator) upgradeClassic(h *hbCtx, g *group) (int16, string) {
	if why := c.upgradeRefusal(g); why != "" {
		c.cfg.Logger.Info("classic group not upgraded to a consumer group", "group", g.id, "reason", why)
		return kerr.GroupIDNotFound.Code, "Group " + g.id + " is not a consumer group."
	}
	s, err := c.consumerStateOf(g)
	if err != "" {
		c.cfg.Logger.Warn("classic group not upgraded to a consumer group", "group", g.id, "reason", err)
		return kerr.GroupIDNotFound.Code, "Cannot upgrade the classic group " + g.id + " to consumer group because the embedded consumer protocol is malformed."
	}
	h.entries = append(h.entries, entry{key: groupKey(g.id)})
	ids := s.memberIDs()
	for _, id := range ids {
		h.entries = append(h.entries, entry{cgKey(cgMemberKey, g.id, id), cgMemberValue(s.members[id])})
	}
	h.entries = append(h.entries, entry{cgKey(cgMetadataKey, g.id), cgMetadataValue(s.epoch, s.metadataHash)})
	for _, id := range ids {
		h.entries = append(h.entries, entry{cgKey(cgTargetMemberKey, g.id, id), cgTargetMemberValue(s.target[id])})
	}
	h.entries = append(h.entries, entry{cgKey(cgTargetMetadataKey, g.id), cgTargetMetadataValue(s.assignmentEpoch)})
	for _, id := range ids {
		h.entries = append(h.entries, entry{cgKey(cgCurrentKey, g.id, id), cgCurrentValue(s.members[id])})
	}
	prevType, prevState := g.protocolType, g.state
	g.cons, g.protocolType = s, consumerProtocolType
	h.undo = func() { g.cons, g.protocolType, g.state = nil, prevType, prevState }
	h.upgraded = true
	return 0, ""
}

// consumerStateOf is Kafka's ConsumerGroup.fromClassicGroup: each
// member, at the generation's epoch and Stable, keeps the partitions of
// its last assignment (topics that no longer exist left out), which are
// also its target.
func (c *Coordinator) consumerStateOf(g *group) (*consumerState, string) {
	s := newConsumerState()
	s.epoch, s.assignmentEpoch = g.generation, g.generation
	for id, cm := range g.members {
		md := cm.metadata(g.protocol)
		if md == nil && len(cm.protocols) > 0 {
			md = cm.protocols[0].metadata
		}
		var sub kmsg.ConsumerMemberMetadata
		if err := sub.ReadFrom(md); err != nil {
			return nil, "member " + id + ": subscription: " + err.Error()
		}
		var asg kmsg.ConsumerMemberAssignment
		if len(cm.assignment) > 0 {
			if err := asg.ReadFrom(cm.assignment); err != nil {
				return nil, "member " + id + ": assignment: " + err.Error()
			}
		}
		m := &cmember{id: id, instanceID: cm.instanceID, clientID: cm.clientID, clientHost: cm.clientHost,
			rebalanceTimeout: cm.rebalanceTimeout, epoch: g.generation, prevEpoch: g.generation,
			assigned: partSet{}, revoking: partSet{},
			classic: &classicMeta{sessionTimeout: cm.sessionTimeout, protocols: slices.Clone(cm.protocols)}}
		if sub.Rack != nil {
			m.rackID = *sub.Rack
		}
		m.topics = slices.Compact(slices.Sorted(slices.Values(sub.Topics)))
		for _, t := range asg.Topics {
			if c.cfg.Topics == nil {
				break
			}
			if info, ok := c.cfg.Topics.TopicByName(t.Topic); ok {
				for _, p := range t.Partitions {
					m.assigned.add(info.ID, p)
				}
			}
		}
		s.members[id] = m
		s.target[id] = m.assigned.clone()
	}
	s.metadataHash = metadataHash(s.subscribedTopics(), c.cfg.Topics)
	return s, ""
}

// finishUpgrade clears the classic state of an upgraded group once its
// records are written: parked requests are answered
// REBALANCE_IN_PROGRESS, the classic timers stop, the members' metadata
// bytes are released, and each member's session runs on its classic
// session timeout.
func (c *Coordinator) finishUpgrade(g *group) {
	for _, id := range slices.Clone(g.order) {
		m := g.members[id]
		g.answerJoin(m, joinError(id, kerr.RebalanceInProgress.Code))
		g.answerSync(m, syncError(kerr.RebalanceInProgress.Code))
		c.timers.cancel(heartbeatKey(g.id, id))
		g.remove(id)
	}
	for id := range g.pending {
		c.timers.cancel(pendingKey(g.id, id))
		delete(g.pending, id)
	}
	c.timers.cancel(joinKey(g.id))
	c.timers.cancel(syncKey(g.id))
	g.join, g.leader, g.protocol, g.generation = nil, "", "", 0
	clear(g.toSync)
	for _, id := range g.cons.memberIDs() {
		if m := g.cons.members[id]; m.classic != nil {
			c.timers.set(consumerSessionKey(g.id, id), c.now.Add(time.Duration(m.classic.sessionTimeout)*time.Millisecond))
		}
	}
	c.cfg.Logger.Info("classic group upgraded to a consumer group", "group", g.id, "members", len(g.cons.members))
}

// Online downgrade (Kafka's validateOnlineDowngradeWithFencedMember,
// convertToClassicGroup, ClassicGroup.fromConsumerGroup): when the last
// member of the consumer protocol leaves or is fenced and the others are
// classic members, the group turns back into a classic group, if
// group.consumer.migration.policy allows (downgrade or bidirectional)
// and group.max.size admits its members. The consumer group's records
// are deleted and the classic group's written in one batch: Stable at
// the group epoch, the members in member id order (the first leads),
// each with its target assignment in the consumer protocol. A rebalance
// starts at once, so the members rejoin it as a classic group.

// downgradeRefusal is why the consumer group may not turn back into a
// classic group when leaving goes, "" if it may.
func (c *Coordinator) downgradeRefusal(s *consumerState, leaving string) string {
	for id, m := range s.members {
		if id != leaving && m.classic == nil {
			return "a member uses the consumer protocol"
		}
	}
	switch {
	case len(s.members) <= 1:
		return "the group is empty"
	case !migrationAllows(c.cfg.MigrationPolicy, MigrationDowngrade):
		return "the online downgrade is disabled"
	case len(s.members)-1 > c.cfg.MaxSize:
		return "the group size exceeds the classic group maximum size"
	}
	return ""
}

// downgradeConsumer returns the records that turn h's consumer group,
// without member leaving, into a classic group, and the function that
// makes the change once they are written; nil if the group stays a
// consumer group.
func (c *Coordinator) downgradeConsumer(h *hbCtx, leaving string) ([]entry, func()) {
	g, s := h.g, h.g.cons
	if why := c.downgradeRefusal(s, leaving); why != "" {
		if why != "a member uses the consumer protocol" && why != "the group is empty" {
			c.cfg.Logger.Info("consumer group not downgraded to a classic group", "group", g.id, "reason", why)
		}
		return nil, nil
	}
	ids := s.memberIDs()
	entries := consumerGroupTombstones(g.id, s, ids)
	var members []*member
	var targets []partSet
	for _, id := range ids {
		if id != leaving {
			members = append(members, asClassicMember(s.members[id]))
			targets = append(targets, s.target[id])
		}
	}
	rec, protocol := c.classicGroupRecord(g.id, s.epoch, members, targets)
	entries = append(entries, rec)
	return entries, func() { c.finishDowngrade(g, s.epoch, protocol, members, ids, true) }
}

// Online downgrade on a static member's replacement (Kafka's
// validateOnlineDowngradeWithReplacedMemberId and the last step of
// classicGroupJoinToConsumerGroup): when a classic member joins with a
// group.instance.id and no member id, replacing the static member of
// that instance id, and the member replaced was the group's last of the
// consumer protocol, the group turns into a classic group in the
// JoinGroup's batch, if group.consumer.migration.policy allows and
// group.max.size admits its members. After the records of the
// replacement come the consumer group's tombstones (the joining member
// in place of the one it replaced) and the classic group's record. The
// classic group is the consumer group as it stood before the join: its
// group epoch is the generation, each member keeps its target, and the
// joining member, added last, takes the target of the member it
// replaced. No rebalance starts: the group is Stable, the joining
// member is answered at once with its member epoch as the generation
// and syncs to get its assignment, and the others go on heartbeating.

// replacedDowngradeRefusal is why consumer group before may not turn
// into a classic group when a classic member replaces static member
// replaced, "" if it may.
func (c *Coordinator) replacedDowngradeRefusal(before *consumerState, replaced string) string {
	for id, m := range before.members {
		if (id == replaced) != (m.classic == nil) {
			return "a member uses the consumer protocol"
		}
	}
	switch {
	case !migrationAllows(c.cfg.MigrationPolicy, MigrationDowngrade):
		return "the online downgrade is disabled"
	case len(before.members) > c.cfg.MaxSize:
		return "the group size exceeds the classic group maximum size"
	}
	return ""
}

// downgradeReplaced returns the records that turn h's consumer group
// into a classic group now that joining replaced h.replaced, and the
// function that makes the change once they are written; nil if the
// group stays a consumer group. before is the group as it was before
// the JoinGroup.
func (c *Coordinator) downgradeReplaced(h *hbCtx, before *consumerState, joining *cmember) ([]entry, func()) {
	g, replaced := h.g, h.replaced
	if why := c.replacedDowngradeRefusal(before, replaced); why != "" {
		if why != "a member uses the consumer protocol" {
			c.cfg.Logger.Info("consumer group not downgraded to a classic group", "group", g.id, "reason", why)
		}
		return nil, nil
	}
	ids := g.cons.memberIDs()
	entries := consumerGroupTombstones(g.id, g.cons, ids)
	var members []*member
	var targets []partSet
	for _, id := range before.memberIDs() {
		if id != replaced {
			members = append(members, asClassicMember(before.members[id]))
			targets = append(targets, before.target[id])
		}
	}
	members = append(members, asClassicMember(joining))
	targets = append(targets, before.target[replaced])
	rec, protocol := c.classicGroupRecord(g.id, before.epoch, members, targets)
	entries = append(entries, rec)
	stopped := append(ids, replaced)
	return entries, func() { c.finishDowngrade(g, before.epoch, protocol, members, stopped, false) }
}

// consumerGroupTombstones delete consumer group s's records, for
// members ids, in Kafka's order (ConsumerGroup.createGroupTombstoneRecords).
func consumerGroupTombstones(groupID string, s *consumerState, ids []string) []entry {
	var entries []entry
	for _, id := range ids {
		entries = append(entries, entry{key: cgKey(cgCurrentKey, groupID, id)})
	}
	for _, id := range ids {
		entries = append(entries, entry{key: cgKey(cgTargetMemberKey, groupID, id)})
	}
	entries = append(entries, entry{key: cgKey(cgTargetMetadataKey, groupID)})
	for _, id := range ids {
		entries = append(entries, entry{key: cgKey(cgMemberKey, groupID, id)})
	}
	for _, expr := range slices.Sorted(maps.Keys(s.regexes)) {
		entries = append(entries, entry{key: cgRegexKeyBytes(groupID, expr)})
	}
	return append(entries, entry{key: cgKey(cgMetadataKey, groupID)})
}

// asClassicMember is the member of a classic group that classic member
// cm of a consumer group becomes.
func asClassicMember(cm *cmember) *member {
	return &member{id: cm.id, instanceID: cm.instanceID, clientID: cm.clientID, clientHost: cm.clientHost,
		rebalanceTimeout: cm.rebalanceTimeout, sessionTimeout: cm.classic.sessionTimeout,
		protocolType: consumerProtocolType, protocols: cm.classic.protocols}
}

// classicGroupRecord is the record of the classic group a consumer group
// turns into (Kafka's ClassicGroup.fromConsumerGroup): Stable at
// generation, members in order (the first leads), each given its target
// as a consumer protocol assignment in the version of its subscription.
// It sets the members' assignments and returns the protocol selected.
func (c *Coordinator) classicGroupRecord(groupID string, generation int32, members []*member, targets []partSet) (entry, string) {
	cg := newGroup(groupID, c.now, bounds{})
	cg.generation, cg.protocolType = generation, consumerProtocolType
	for _, m := range members {
		cg.add(m, nil, 0)
	}
	cg.protocol = cg.selectProtocol()
	assignments := map[string][]byte{}
	for i, m := range members {
		m.assignment = c.encodeAssignment(targets[i], m.metadata(cg.protocol))
		assignments[m.id] = m.assignment
	}
	return entry{groupKey(groupID), groupValue(cg, assignments)}, cg.protocol
}

// finishDowngrade makes g the classic group its records describe, and
// starts a rebalance if asked; ids are the consumer members whose
// timers stop.
func (c *Coordinator) finishDowngrade(g *group, generation int32, protocol string, members []*member, ids []string, rebalance bool) {
	for _, id := range ids {
		c.timers.cancel(consumerSessionKey(g.id, id))
		c.timers.cancel(consumerRevokeKey(g.id, id))
	}
	g.cons, g.protocolType, g.generation = nil, consumerProtocolType, generation
	g.state, g.stateTime = Stable, c.now
	for _, m := range members {
		g.add(m, nil, 0)
		g.forceSettle(m)
		c.scheduleHeartbeat(g, m)
	}
	g.protocol = protocol
	g.subscribed = g.computeSubscribed()
	c.cfg.Logger.Info("consumer group downgraded to a classic group", "group", g.id, "members", len(members))
	if rebalance {
		c.prepareRebalance(g, "downgrade group "+g.id+" from consumer to classic")
	}
}

// encodeAssignment is a consumer protocol assignment of ps in the
// version of the member's subscription md.
func (c *Coordinator) encodeAssignment(ps partSet, md []byte) []byte {
	a := kmsg.NewConsumerMemberAssignment()
	if len(md) >= 2 {
		a.Version = min(max(int16(md[0])<<8|int16(md[1]), 0), 3)
	}
	for _, t := range ps.byTopic() {
		if c.cfg.Topics == nil {
			break
		}
		info, ok := c.cfg.Topics.TopicByID(t.id)
		if !ok {
			continue
		}
		at := kmsg.NewConsumerMemberAssignmentTopic()
		at.Topic, at.Partitions = info.Name, t.partitions
		a.Topics = append(a.Topics, at)
	}
	return a.AppendTo(nil)
}
