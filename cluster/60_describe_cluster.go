package cluster

// DescribeCluster, versions 0-1: this node, as broker and controller.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	vnet "github.com/varve/varve/net"
)

func init() {
	register(&api{key: kmsg.DescribeCluster.Int16(), min: 0, max: 1, serve: serveDescribeCluster})
}

func serveDescribeCluster(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.DescribeClusterRequest)
	resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
	resp.ClusterID, resp.ControllerID = b.meta.clusterID(), b.nodeID
	resp.EndpointType = req.EndpointType
	if resp.EndpointType == 0 {
		resp.EndpointType = 1
	}
	br := kmsg.NewDescribeClusterResponseBroker()
	br.NodeID, br.Host, br.Port = b.nodeID, b.host, b.port
	resp.Brokers = []kmsg.DescribeClusterResponseBroker{br}
	resp.ClusterAuthorizedOperations = -2147483648
	return resp
}
