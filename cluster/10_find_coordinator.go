package cluster

// FindCoordinator, versions 0-6.
//
// Every group and transaction key is coordinated by this node (v4+
// batches keys). For a group key, __consumer_offsets is created on
// demand, as Kafka does, with offsets.topic.num.partitions partitions;
// if that fails the answer is COORDINATOR_NOT_AVAILABLE. There is no
// transaction coordinator yet: transaction keys get this node.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	vnet "github.com/varve/varve/net"
)

func init() {
	register(&api{key: kmsg.FindCoordinator.Int16(), min: 0, max: 6, serve: serveFindCoordinator})
}

func serveFindCoordinator(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.FindCoordinatorRequest)
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	var code int16
	if req.CoordinatorType == 0 { // group
		if err := b.groups.ensureTopic(); err != nil {
			b.log.Warn("creating __consumer_offsets failed", "err", err)
			code = kerr.CoordinatorNotAvailable.Code
		}
	}
	resp.NodeID, resp.Host, resp.Port, resp.ErrorCode = b.nodeID, b.host, b.port, code
	keys := req.CoordinatorKeys
	if r.Version < 4 {
		keys = []string{req.CoordinatorKey}
	}
	for _, k := range keys {
		c := kmsg.NewFindCoordinatorResponseCoordinator()
		c.Key, c.NodeID, c.Host, c.Port, c.ErrorCode = k, b.nodeID, b.host, b.port, code
		if code != 0 {
			c.NodeID, c.Host, c.Port = -1, "", -1
		}
		resp.Coordinators = append(resp.Coordinators, c)
	}
	if code != 0 {
		resp.NodeID, resp.Host, resp.Port = -1, "", -1
	}
	return resp
}
