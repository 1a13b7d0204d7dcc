package group

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// CheckFetchMember validates the member id and epoch OffsetFetch v9+
// carries (Kafka's ConsumerGroup.validateOffsetFetch): for a consumer
// group a member fetching its offsets must be a member
// (UNKNOWN_MEMBER_ID) of the current epoch (STALE_MEMBER_EPOCH); a fetch
// without member id and epoch (an admin client's) and every fetch of a
// classic group pass.
func (c *Coordinator) CheckFetchMember(now time.Time, groupID string, memberID *string, epoch int32) int16 {
	c.now = now
	if memberID == nil && epoch < 0 {
		return 0
	}
	if code := c.check(groupID, kmsg.OffsetFetch); code != 0 {
		return code
	}
	g := c.groups[groupID]
	if g == nil || g.cons == nil {
		return 0
	}
	var m *cmember
	if memberID != nil {
		m = g.cons.members[*memberID]
	}
	switch {
	case m == nil:
		return kerr.UnknownMemberID.Code
	case epoch != m.epoch && m.classic != nil:
		return kerr.IllegalGeneration.Code // a classic member's epoch is its generation
	case epoch != m.epoch:
		return kerr.StaleMemberEpoch.Code
	}
	return 0
}

// validateConsumerTxnCommit is Kafka's ConsumerGroup.validateOffsetCommit
// for TxnOffsetCommit (KIP-447 with KIP-848): the committer must be a
// member at its member epoch (the request's generation), in any
// version; a classic member with another epoch gets
// ILLEGAL_GENERATION, a consumer-protocol member STALE_MEMBER_EPOCH.
func validateConsumerTxnCommit(g *group, memberID string, epoch int32) int16 {
	m := g.cons.members[memberID]
	switch {
	case m == nil:
		return kerr.UnknownMemberID.Code
	case epoch != m.epoch && m.classic != nil:
		return kerr.IllegalGeneration.Code
	case epoch != m.epoch:
		return kerr.StaleMemberEpoch.Code
	}
	return 0
}

// revertConsumerGroup lets a classic member join where a consumer group
// is: an Empty consumer group becomes a classic group, keeping its
// offsets (Kafka's downgrade of an empty group); one with members
// answers INCONSISTENT_GROUP_PROTOCOL (Join serves classic members of a
// consumer group with members before it gets here, consumer_classic.go).
// Nothing to do for a classic group.
func (c *Coordinator) revertConsumerGroup(g *group) int16 {
	switch {
	case g.cons == nil:
		return 0
	case len(g.cons.members) > 0:
		return kerr.InconsistentGroupProtocol.Code
	}
	if code := appendCode(c.append(groupTombstones(g)), false); code != 0 {
		return code
	}
	g.cons, g.protocolType, g.subscribed, g.state = nil, "", nil, Empty
	return 0
}
