package cluster

// Heartbeat, versions 0-4.
//
// Restarts the member's session timeout; REBALANCE_IN_PROGRESS tells it
// to rejoin, ILLEGAL_GENERATION and UNKNOWN_MEMBER_ID that it is stale,
// FENCED_INSTANCE_ID (v3+) that another process took its instance id.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	"github.com/varve/varve/group"
	vnet "github.com/varve/varve/net"
)

func init() {
	register(&api{key: kmsg.Heartbeat.Int16(), min: 0, max: 4, serve: serveHeartbeat})
}

func serveHeartbeat(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.HeartbeatRequest)
	var resp *kmsg.HeartbeatResponse
	if code := b.groupRefusal(r, acl.OpRead, req.Group); code != 0 {
		resp = req.ResponseKind().(*kmsg.HeartbeatResponse)
		resp.ErrorCode = code
		return resp
	}
	b.groups.do(req.Group, func(c *group.Coordinator) { resp = c.Heartbeat(time.Now(), req) })
	return resp
}
