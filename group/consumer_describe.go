package group

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ConsumerDescribe handles one group of ConsumerGroupDescribe (KIP-848):
// the group's state, epochs, assignor and members with their current and
// target assignments. A group that does not exist, or is not a consumer
// group, is GROUP_ID_NOT_FOUND.
func (c *Coordinator) ConsumerDescribe(now time.Time, groupID string) kmsg.ConsumerGroupDescribeResponseGroup {
	c.now = now
	d := kmsg.NewConsumerGroupDescribeResponseGroup()
	d.Group = groupID
	if code := c.check(groupID, kmsg.ConsumerGroupDescribe); code != 0 {
		d.ErrorCode = code
		return d
	}
	g := c.groups[groupID]
	if g == nil || g.cons == nil {
		d.ErrorCode = kerr.GroupIDNotFound.Code
		msg := "Group " + groupID + " not found."
		if g != nil {
			msg = "Group " + groupID + " is not a consumer group."
		}
		d.ErrorMessage = &msg
		return d
	}
	s := g.cons
	d.State, d.Epoch, d.AssignmentEpoch, d.AssignorName = s.stateName(), s.epoch, s.assignmentEpoch, c.groupAssignor(s)
	for _, id := range s.memberIDs() {
		m := s.members[id]
		dm := kmsg.NewConsumerGroupDescribeResponseGroupMember()
		dm.MemberID, dm.InstanceID, dm.RackID = m.id, nullable(m.instanceID), nullable(m.rackID)
		dm.MemberEpoch, dm.ClientID, dm.ClientHost = m.epoch, m.clientID, m.clientHost
		dm.SubscribedTopics, dm.SubscribedTopicRegex = append([]string{}, m.topics...), nullable(m.regex)
		dm.Assignment, dm.TargetAssignment = c.describeAssignment(m.assigned), c.describeAssignment(s.target[id])
		dm.MemberType = 1 // consumer protocol (KIP-1099)
		if m.classic != nil {
			dm.MemberType = 0 // classic protocol
		}
		d.Members = append(d.Members, dm)
	}
	return d
}

func (c *Coordinator) describeAssignment(ps partSet) kmsg.Assignment {
	a := kmsg.NewAssignment()
	for _, t := range ps.byTopic() {
		at := kmsg.NewAssignmentTopicPartition()
		at.TopicID, at.Partitions = t.id, t.partitions
		if c.cfg.Topics != nil {
			if info, ok := c.cfg.Topics.TopicByID(t.id); ok {
				at.Topic = info.Name
			}
		}
		a.TopicPartitions = append(a.TopicPartitions, at)
	}
	return a
}

// describeConsumerAsClassic fills a DescribeGroups entry for a consumer
// group as Kafka's ConsumerGroup.asDescribedGroup does: protocol type
// "consumer", its state, and its members without protocol metadata.
func describeConsumerAsClassic(g *group, d *kmsg.DescribeGroupsResponseGroup) {
	d.State, d.ProtocolType = g.cons.stateName(), consumerProtocolType
	for _, id := range g.cons.memberIDs() {
		m := g.cons.members[id]
		dm := kmsg.NewDescribeGroupsResponseGroupMember()
		dm.MemberID, dm.InstanceID, dm.ClientID, dm.ClientHost = m.id, nullable(m.instanceID), m.clientID, m.clientHost
		dm.ProtocolMetadata, dm.MemberAssignment = []byte{}, []byte{}
		d.Members = append(d.Members, dm)
	}
}
