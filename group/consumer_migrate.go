package group

import (
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
