package cluster

// SyncGroup, versions 0-5.
//
// Followers' requests are parked until the leader's SyncGroup brings the
// assignment, which is stored with the group in __consumer_offsets before
// anyone is answered (package group). v5 checks the protocol type and
// name against the group's (INCONSISTENT_GROUP_PROTOCOL).

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	"github.com/varve/varve/group"
	vnet "github.com/varve/varve/net"
)

func init() {
	register(&api{key: kmsg.SyncGroup.Int16(), min: 0, max: 5, serve: serveSyncGroup})
}

func serveSyncGroup(b *Broker, r *vnet.Request, kreq kmsg.Request, respond func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.SyncGroupRequest)
	reply := func(resp *kmsg.SyncGroupResponse) { respond(encoded(r.Version, resp)) }
	if code := b.groupRefusal(r, acl.OpRead, req.Group); code != 0 {
		resp := req.ResponseKind().(*kmsg.SyncGroupResponse)
		resp.ErrorCode = code
		return resp
	}
	b.groups.do(req.Group, func(c *group.Coordinator) { c.Sync(time.Now(), req, reply) })
	return nil
}
