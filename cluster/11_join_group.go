package cluster

// JoinGroup, versions 0-9.
//
// Kafka's classic group protocol (package group): the request is parked
// until the rebalance completes (every member rejoined, the rebalance
// timeout passed, or group.initial.rebalance.delay.ms for a group
// starting from Empty), then answered from whichever goroutine completes
// it. v4+ first joins get MEMBER_ID_REQUIRED (KIP-394); v5+ static
// members (group.instance.id, KIP-345); v9 SkipAssignment for a static
// leader rejoining a Stable group (KIP-814). The member's host is the
// peer address, as Kafka shows it ("/127.0.0.1"). A consumer joining a
// KIP-848 consumer group with members is answered at once, its
// assignment computed by the broker (group's consumer_classic.go).

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	"github.com/varve/varve/group"
	vnet "github.com/varve/varve/net"
)

func init() {
	register(&api{key: kmsg.JoinGroup.Int16(), min: 0, max: 9, serve: serveJoinGroup})
}

func serveJoinGroup(b *Broker, r *vnet.Request, kreq kmsg.Request, respond func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.JoinGroupRequest)
	client := group.Client{ID: r.ClientID, Host: clientHost(r)}
	reply := func(resp *kmsg.JoinGroupResponse) { respond(encoded(r.Version, resp)) }
	if code := b.groupRefusal(r, acl.OpRead, req.Group); code != 0 {
		resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
		resp.ErrorCode, resp.MemberID = code, req.MemberID
		return resp
	}
	b.groups.do(req.Group, func(c *group.Coordinator) { c.Join(time.Now(), req, client, reply) })
	return nil
}

// encoded is a response at the request's version, for APIs that answer
// from a callback.
func encoded(version int16, resp kmsg.Response) vnet.Response {
	resp.SetVersion(version)
	return bytesResponse(resp.AppendTo(nil))
}
