package cluster

// FindCoordinator, versions 0-6.
//
// Every group and transaction key is coordinated by this node (v4+
// batches keys). The group coordinator itself comes with consumer groups.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	vnet "github.com/varve/varve/net"
)

func init() {
	register(&api{key: kmsg.FindCoordinator.Int16(), min: 0, max: 6, serve: serveFindCoordinator})
}

func serveFindCoordinator(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.FindCoordinatorRequest)
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	resp.NodeID, resp.Host, resp.Port = b.nodeID, b.host, b.port
	keys := req.CoordinatorKeys
	if r.Version < 4 {
		keys = []string{req.CoordinatorKey}
	}
	for _, k := range keys {
		c := kmsg.NewFindCoordinatorResponseCoordinator()
		c.Key, c.NodeID, c.Host, c.Port = k, b.nodeID, b.host, b.port
		resp.Coordinators = append(resp.Coordinators, c)
	}
	return resp
}
