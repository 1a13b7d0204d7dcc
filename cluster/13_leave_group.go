package cluster

// LeaveGroup, versions 0-5.
//
// v0-2: one member by member id, the error top-level. v3+: a batch of
// members, each by member id or by group.instance.id alone
// (administrative removal of static members, KIP-345), each with its
// own error. The group rebalances without them.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	"github.com/varve/varve/group"
	vnet "github.com/varve/varve/net"
)

func init() {
	register(&api{key: kmsg.LeaveGroup.Int16(), min: 0, max: 5, serve: serveLeaveGroup})
}

func serveLeaveGroup(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.LeaveGroupRequest)
	var resp *kmsg.LeaveGroupResponse
	if code := b.groupRefusal(r, acl.OpRead, req.Group); code != 0 {
		resp = req.ResponseKind().(*kmsg.LeaveGroupResponse)
		resp.ErrorCode = code
		return resp
	}
	b.groups.do(req.Group, func(c *group.Coordinator) { resp = c.Leave(time.Now(), req) })
	return resp
}
