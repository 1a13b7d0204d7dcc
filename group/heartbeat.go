package group

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Heartbeat handles Heartbeat (Kafka's handleHeartbeat): it restarts the
// member's session timeout and tells it, with REBALANCE_IN_PROGRESS,
// when it must rejoin.
func (c *Coordinator) Heartbeat(now time.Time, req *kmsg.HeartbeatRequest) *kmsg.HeartbeatResponse {
	c.now = now
	resp := kmsg.NewPtrHeartbeatResponse()
	resp.ErrorCode = c.heartbeat(req)
	return resp
}

func (c *Coordinator) heartbeat(req *kmsg.HeartbeatRequest) int16 {
	if code := c.check(req.Group, kmsg.Heartbeat); code != 0 {
		if code == kerr.CoordinatorLoadInProgress.Code {
			return 0 // Kafka answers blindly while loading
		}
		return code
	}
	g := c.groups[req.Group]
	if g == nil {
		return kerr.UnknownMemberID.Code
	}
	if g.is(Dead) {
		return kerr.CoordinatorNotAvailable.Code
	}
	if g.cons != nil {
		return c.classicHeartbeatConsumer(g, req) // consumer_classic.go
	}
	instanceID := ""
	if req.InstanceID != nil {
		instanceID = *req.InstanceID
	}
	if code := validateMember(g, req.MemberID, instanceID); code != 0 {
		return code
	}
	if req.Generation != g.generation {
		return kerr.IllegalGeneration.Code
	}
	switch g.state {
	case Empty:
		return kerr.UnknownMemberID.Code
	case PreparingRebalance:
		c.scheduleHeartbeat(g, g.members[req.MemberID])
		return kerr.RebalanceInProgress.Code
	}
	// CompletingRebalance (a member may heartbeat once it has its
	// JoinGroup response) and Stable.
	c.scheduleHeartbeat(g, g.members[req.MemberID])
	return 0
}
