package cluster

// ListGroups, versions 0-5.
//
// Every group of every __consumer_offsets partition, sorted by name
// within a partition, with its protocol type, state (v4+, and the
// StatesFilter, case-insensitive) and type (v5+, "classic", and the
// TypesFilter). COORDINATOR_LOAD_IN_PROGRESS while a partition is still
// loading, with the groups of the partitions already loaded.

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	"github.com/varve/varve/group"
	vnet "github.com/varve/varve/net"
)

func init() {
	register(&api{key: kmsg.ListGroups.Int16(), min: 0, max: 5, serve: serveListGroups})
}

func serveListGroups(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.ListGroupsRequest)
	resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
	now := time.Now()
	for _, s := range b.groups.shards {
		s.do(func(c *group.Coordinator) {
			code, groups := c.ListGroups(now, req.StatesFilter, req.TypesFilter)
			if code != 0 && resp.ErrorCode == 0 {
				resp.ErrorCode = code
			}
			resp.Groups = append(resp.Groups, groups...)
		})
	}
	if !b.authorizedCluster(r, acl.OpDescribe) { // Kafka: the groups the principal may describe
		resp.Groups = slices.DeleteFunc(resp.Groups, func(g kmsg.ListGroupsResponseGroup) bool {
			return b.groupRefusal(r, acl.OpDescribe, g.Group) != 0
		})
	}
	return resp
}
