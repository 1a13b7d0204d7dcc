package group

import "github.com/twmb/franz-go/pkg/kmsg"

func leaveByInstance(groupID, instance string) *kmsg.LeaveGroupRequest {
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Version, req.Group = 5, groupID
	lm := kmsg.NewLeaveGroupRequestMember()
	lm.InstanceID = &instance
	req.Members = []kmsg.LeaveGroupRequestMember{lm}
	return req
}

func heartbeatReq(groupID string) *kmsg.HeartbeatRequest {
	req := kmsg.NewPtrHeartbeatRequest()
	req.Version, req.Group, req.MemberID, req.Generation = 4, groupID, "m", 1
	return req
}
