package group

import (
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// authorizedGroupOps is what DescribeGroups v3+ reports when asked for
// authorized operations without an authorizer: READ, DELETE and
// DESCRIBE (bits 3, 6 and 8 of Kafka's AclOperation codes).
const authorizedGroupOps = 1<<3 | 1<<6 | 1<<8

// GroupType is the type ListGroups v5 reports for classic groups.
const GroupType = "classic"

// DescribeGroup handles one group of DescribeGroups (Kafka's
// handleDescribeGroup): a group that does not exist is described as
// Dead; members' metadata and assignments are shown only once the
// group is Stable.
func (c *Coordinator) DescribeGroup(now time.Time, groupID string, withOps bool) kmsg.DescribeGroupsResponseGroup {
	c.now = now
	d := kmsg.NewDescribeGroupsResponseGroup()
	d.Group = groupID
	if withOps {
		d.AuthorizedOperations = authorizedGroupOps
	}
	if code := c.check(groupID, kmsg.DescribeGroups); code != 0 {
		d.ErrorCode = code
		return d
	}
	g := c.groups[groupID]
	if g == nil {
		d.State = Dead.String()
		return d
	}
	if g.cons != nil {
		describeConsumerAsClassic(g, &d)
		return d
	}
	d.State, d.ProtocolType = g.state.String(), g.protocolType
	stable := g.is(Stable)
	if stable {
		d.Protocol = g.protocol
	}
	for _, id := range g.order {
		m := g.members[id]
		dm := kmsg.NewDescribeGroupsResponseGroupMember()
		dm.MemberID, dm.InstanceID, dm.ClientID, dm.ClientHost = m.id, m.instanceIDPtr(), m.clientID, m.clientHost
		dm.ProtocolMetadata, dm.MemberAssignment = []byte{}, []byte{}
		if stable {
			dm.ProtocolMetadata, dm.MemberAssignment = nonNil(m.metadata(g.protocol)), nonNil(m.assignment)
		}
		d.Members = append(d.Members, dm)
	}
	return d
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// ListGroups lists the partition's groups, filtered by state and type
// names (case-insensitive; empty filters match all), with the error
// code Kafka gives while the partition is not ready.
func (c *Coordinator) ListGroups(now time.Time, states, types []string) (int16, []kmsg.ListGroupsResponseGroup) {
	c.now = now
	switch c.status {
	case stopped:
		return kerr.CoordinatorNotAvailable.Code, nil
	case loading:
		return kerr.CoordinatorLoadInProgress.Code, nil
	case notCoordinator:
		return 0, nil
	}
	var out []kmsg.ListGroupsResponseGroup
	for _, id := range c.sortedGroupIDs() {
		g := c.groups[id]
		state, typ := g.state.String(), GroupType
		if g.cons != nil {
			state, typ = g.cons.stateName(), ConsumerGroupType
		}
		if len(states) > 0 && !containsFold(states, state) || len(types) > 0 && !containsFold(types, typ) {
			continue
		}
		lg := kmsg.NewListGroupsResponseGroup()
		lg.Group, lg.ProtocolType, lg.GroupState, lg.GroupType = id, g.protocolType, state, typ
		out = append(out, lg)
	}
	return 0, out
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// DeleteGroups handles DeleteGroups for the partition's groups (Kafka's
// handleDeleteGroups): only Empty groups may go; their offsets and
// metadata are removed with tombstones. Unlike Kafka, which drops the
// group from memory even when writing the tombstones fails, a group
// whose tombstones could not be written stays and the error is returned,
// so memory never runs ahead of the log.
func (c *Coordinator) DeleteGroups(now time.Time, groupIDs []string) []kmsg.DeleteGroupsResponseGroup {
	c.now = now
	out := make([]kmsg.DeleteGroupsResponseGroup, 0, len(groupIDs))
	for _, id := range groupIDs {
		r := kmsg.NewDeleteGroupsResponseGroup()
		r.Group, r.ErrorCode = id, c.deleteGroup(id)
		out = append(out, r)
	}
	return out
}

func (c *Coordinator) deleteGroup(id string) int16 {
	if code := c.check(id, kmsg.DeleteGroups); code != 0 {
		return code
	}
	g := c.groups[id]
	switch {
	case g == nil || g.is(Dead):
		return kerr.GroupIDNotFound.Code
	case !g.is(Empty):
		return kerr.NonEmptyGroup.Code
	}
	entries := append(offsetTombstones(g, nil), groupTombstones(g)...)
	if code := appendCode(c.append(entries), false); code != 0 {
		return code
	}
	c.logTransition(g, Dead)
	delete(c.groups, id)
	c.cfg.Logger.Info("group deleted", "group", id, "offsets", len(entries)-1)
	return 0
}

// groupTombstones delete an Empty group's own records: its metadata for
// a classic group; the target assignment's epoch and the group epoch for
// a consumer group (Kafka's ConsumerGroup.createGroupTombstoneRecords;
// its members' records went when they left).
func groupTombstones(g *group) []entry {
	if g.cons != nil {
		return []entry{{key: cgKey(cgTargetMetadataKey, g.id)}, {key: cgKey(cgMetadataKey, g.id)}}
	}
	return []entry{{key: groupKey(g.id)}}
}

// offsetTombstones are tombstones for g's committed offsets of tps (all
// of them when tps is nil), in partition order.
func offsetTombstones(g *group, tps []topicPartition) []entry {
	if tps == nil {
		for tp := range g.offsets {
			tps = append(tps, tp)
		}
	}
	sortTPs(tps)
	var out []entry
	for _, tp := range tps {
		if _, ok := g.offsets[tp]; ok {
			out = append(out, entry{key: offsetKey(g.id, tp)})
		}
	}
	return out
}

// DeleteOffsets handles OffsetDelete (KIP-496, Kafka's
// handleDeleteOffsets): an Empty group's offsets may all be deleted; a
// consumer group with members keeps those of topics it subscribes to
// (GROUP_SUBSCRIBED_TO_TOPIC); any other group with members refuses
// (NON_EMPTY_GROUP). A group left Empty with no offsets is removed.
func (c *Coordinator) DeleteOffsets(now time.Time, req *kmsg.OffsetDeleteRequest) *kmsg.OffsetDeleteResponse {
	c.now = now
	resp := kmsg.NewPtrOffsetDeleteResponse()
	codes := map[topicPartition]int16{}
	var eligible []topicPartition
	resp.ErrorCode = c.classifyOffsetDelete(req, codes, &eligible)
	if resp.ErrorCode != 0 {
		return resp
	}
	if len(eligible) > 0 {
		code := c.removeOffsets(c.groups[req.Group], eligible)
		for _, tp := range eligible {
			codes[tp] = code
		}
	}
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetDeleteResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetDeleteResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, codes[topicPartition{t.Topic, p.Partition}]
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// classifyOffsetDelete returns the group-level error, or sorts the
// request's partitions into per-partition errors and those to delete.
func (c *Coordinator) classifyOffsetDelete(req *kmsg.OffsetDeleteRequest, codes map[topicPartition]int16, eligible *[]topicPartition) int16 {
	if code := c.check(req.Group, kmsg.OffsetDelete); code != 0 {
		return code
	}
	g := c.groups[req.Group]
	if g == nil || g.is(Dead) {
		return kerr.GroupIDNotFound.Code
	}
	if !g.is(Empty) && g.protocolType != consumerProtocolType {
		return kerr.NonEmptyGroup.Code
	}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			tp := topicPartition{t.Topic, p.Partition}
			switch {
			case c.cfg.KnownPartition != nil && !c.cfg.KnownPartition(t.Topic, p.Partition):
				codes[tp] = kerr.UnknownTopicOrPartition.Code
			case !g.is(Empty) && g.subscribedTo(t.Topic):
				codes[tp] = kerr.GroupSubscribedToTopic.Code
			default:
				*eligible = append(*eligible, tp)
			}
		}
	}
	return 0
}

// removeOffsets deletes some of g's offsets with tombstones and removes
// g if that leaves it Empty with nothing committed (Kafka's
// cleanupGroupMetadata for one group).
func (c *Coordinator) removeOffsets(g *group, tps []topicPartition) int16 {
	entries := offsetTombstones(g, tps)
	dead := g.is(Empty) && len(g.offsets) == len(entries)
	if dead {
		entries = append(entries, groupTombstones(g)...)
	}
	if len(entries) == 0 {
		return 0
	}
	if code := appendCode(c.append(entries), true); code != 0 {
		return code
	}
	for _, tp := range tps {
		delete(g.offsets, tp)
	}
	if dead {
		c.logTransition(g, Dead)
		delete(c.groups, g.id)
	}
	return 0
}
