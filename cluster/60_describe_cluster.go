package cluster

// DescribeCluster, versions 0-1: the unfenced brokers of the metadata
// image, and the controller Metadata names.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	vnet "github.com/varve/varve/net"
)

func init() {
	register(&api{key: kmsg.DescribeCluster.Int16(), min: 0, max: 1, serve: serveDescribeCluster})
}

func serveDescribeCluster(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.DescribeClusterRequest)
	resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
	img := b.meta.image()
	brokers, controller := metadataBrokers(img, b.clientListener(r))
	resp.ClusterID, resp.ControllerID = img.ClusterID(), controller
	resp.EndpointType = req.EndpointType
	if resp.EndpointType == 0 {
		resp.EndpointType = 1
	}
	for _, mb := range brokers {
		br := kmsg.NewDescribeClusterResponseBroker()
		br.NodeID, br.Host, br.Port, br.Rack = mb.NodeID, mb.Host, mb.Port, mb.Rack
		resp.Brokers = append(resp.Brokers, br)
	}
	resp.ClusterAuthorizedOperations = -2147483648
	if req.IncludeClusterAuthorizedOperations && b.authz != nil { // KIP-430; Kafka checks nothing else here
		resp.ClusterAuthorizedOperations = b.authorizedOperations(r, acl.ResourceCluster, acl.ClusterName, clusterOperations)
	}
	return resp
}
