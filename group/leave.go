package group

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Leave handles LeaveGroup (Kafka's handleLeaveGroup). Before v3 one
// member leaves by member id and the error is top-level; from v3 a batch
// of members leaves, each by member id or, administratively, by
// group.instance.id alone (KIP-345), each with its own error.
func (c *Coordinator) Leave(now time.Time, req *kmsg.LeaveGroupRequest) *kmsg.LeaveGroupResponse {
	c.now = now
	resp := kmsg.NewPtrLeaveGroupResponse()
	leaving := req.Members
	if req.Version < 3 {
		lm := kmsg.NewLeaveGroupRequestMember()
		lm.MemberID = req.MemberID
		leaving = []kmsg.LeaveGroupRequestMember{lm}
	}
	if code := c.check(req.Group, kmsg.LeaveGroup); code != 0 {
		resp.ErrorCode = code
		return resp
	}
	g := c.groups[req.Group]
	if g != nil && g.is(Dead) {
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return resp
	}
	if g != nil && g.cons != nil {
		resp.Members = c.classicLeaveConsumer(g, leaving) // consumer_classic.go
		leaving = nil
	}
	for _, lm := range leaving {
		out := kmsg.NewLeaveGroupResponseMember()
		out.MemberID, out.InstanceID = lm.MemberID, lm.InstanceID
		out.ErrorCode = kerr.UnknownMemberID.Code
		if g != nil {
			out.ErrorCode = c.leaveOne(g, lm)
		}
		resp.Members = append(resp.Members, out)
	}
	if req.Version < 3 && len(resp.Members) == 1 {
		resp.ErrorCode, resp.Members = resp.Members[0].ErrorCode, nil
	}
	return resp
}

func (c *Coordinator) leaveOne(g *group, lm kmsg.LeaveGroupRequestMember) int16 {
	instanceID := ""
	if lm.InstanceID != nil {
		instanceID = *lm.InstanceID
	}
	switch {
	case lm.MemberID == "":
		id, ok := g.staticMember(instanceID)
		if instanceID == "" || !ok {
			return kerr.UnknownMemberID.Code
		}
		c.removeLeaving(g, id)
		return 0
	case g.pending[lm.MemberID]:
		c.removePendingAndUpdate(g, lm.MemberID)
		return 0
	}
	if code := validateMember(g, lm.MemberID, instanceID); code != 0 {
		return code
	}
	c.removeLeaving(g, lm.MemberID)
	return 0
}

func (c *Coordinator) removeLeaving(g *group, id string) {
	c.cfg.Logger.Info("member left the group", "group", g.id, "member", id)
	c.removeMemberAndUpdate(g, g.members[id], "member "+id+" left the group")
}
