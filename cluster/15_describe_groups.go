package cluster

// DescribeGroups, versions 0-5.
//
// Each group is described by its coordinator: state, protocol type,
// and members (client id, host, instance id v4+); members' protocol
// metadata and assignments and the group's protocol only once Stable,
// as Kafka. A group that does not exist is "Dead" with no error (v6 would
// answer GROUP_ID_NOT_FOUND; it is not served). Authorized operations
// (v3+), when asked for, are READ, DELETE and DESCRIBE: there are no
// ACLs.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	"github.com/varve/varve/group"
	vnet "github.com/varve/varve/net"
)

func init() {
	register(&api{key: kmsg.DescribeGroups.Int16(), min: 0, max: 5, serve: serveDescribeGroups})
}

func serveDescribeGroups(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.DescribeGroupsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
	for _, id := range req.Groups {
		if code := b.groupRefusal(r, acl.OpDescribe, id); code != 0 {
			g := kmsg.NewDescribeGroupsResponseGroup()
			g.Group, g.ErrorCode = id, code
			resp.Groups = append(resp.Groups, g)
			continue
		}
		b.groups.do(id, func(c *group.Coordinator) {
			resp.Groups = append(resp.Groups, c.DescribeGroup(time.Now(), id, req.IncludeAuthorizedOperations))
		})
		if req.IncludeAuthorizedOperations && b.authz != nil { // KIP-430
			resp.Groups[len(resp.Groups)-1].AuthorizedOperations = b.authorizedOperations(r, acl.ResourceGroup, id, groupOperations)
		}
	}
	return resp
}
