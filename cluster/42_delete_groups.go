package cluster

// DeleteGroups, versions 0-2.
//
// Only Empty groups are deleted (NON_EMPTY_GROUP otherwise,
// GROUP_ID_NOT_FOUND for unknown ones): tombstones for the group and
// each of its committed offsets go to __consumer_offsets, so the log
// cleaner removes them. Groups are deleted by their own coordinators,
// one batch of tombstones per group.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	"github.com/varve/varve/group"
	vnet "github.com/varve/varve/net"
)

func init() {
	register(&api{key: kmsg.DeleteGroups.Int16(), min: 0, max: 2, serve: serveDeleteGroups})
}

func serveDeleteGroups(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.DeleteGroupsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
	for _, id := range req.Groups {
		if code := b.groupRefusal(r, acl.OpDelete, id); code != 0 {
			g := kmsg.NewDeleteGroupsResponseGroup()
			g.Group, g.ErrorCode = id, code
			resp.Groups = append(resp.Groups, g)
			continue
		}
		b.groups.do(id, func(c *group.Coordinator) {
			resp.Groups = append(resp.Groups, c.DeleteGroups(time.Now(), []string{id})...)
		})
	}
	return resp
}
