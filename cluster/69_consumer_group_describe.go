package cluster

// ConsumerGroupDescribe, versions 0-1 (KIP-848).
//
// Each consumer group as its coordinator holds it: state (Empty,
// Assigning, Reconciling, Stable), group and assignment epochs, the
// assignor, and every member with its epoch, subscription, current and
// target assignments (member type "consumer", v1). A group that does
// not exist, or is a classic group, is GROUP_ID_NOT_FOUND. Authorized
// operations when asked for, as DescribeGroups.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	"github.com/varve/varve/group"
	vnet "github.com/varve/varve/net"
)

func init() {
	register(&api{key: kmsg.ConsumerGroupDescribe.Int16(), min: 0, max: 1, serve: serveConsumerGroupDescribe})
}

func serveConsumerGroupDescribe(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.ConsumerGroupDescribeRequest)
	resp := req.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
	for _, id := range req.Groups {
		d := kmsg.NewConsumerGroupDescribeResponseGroup()
		d.Group = id
		switch code := b.groupRefusal(r, acl.OpDescribe, id); {
		case !b.consumerGroupsEnabled():
			d.ErrorCode = kerr.UnsupportedVersion.Code
		case code != 0:
			d.ErrorCode = code
		default:
			b.groups.do(id, func(c *group.Coordinator) { d = c.ConsumerDescribe(time.Now(), id) })
		}
		if req.IncludeAuthorizedOperations && d.ErrorCode == 0 {
			d.AuthorizedOperations = b.authorizedOperations(r, acl.ResourceGroup, id, groupOperations) // KIP-430
		}
		resp.Groups = append(resp.Groups, d)
	}
	return resp
}
