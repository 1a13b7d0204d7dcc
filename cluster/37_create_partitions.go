package cluster

// CreatePartitions, versions 0-3: grow a topic's partition count;
// assignments may name only this node. The new partitions are recorded
// in the metadata first, then created; killed midway, the node creates
// the rest at its next start. They count against the controller
// mutation quota (KIP-599).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/acl"
	vnet "github.com/varve/varve/net"
)

func init() {
	register(&api{key: kmsg.CreatePartitions.Int16(), min: 0, max: 3, serve: serveCreatePartitions})
}

func serveCreatePartitions(b *Broker, r *vnet.Request, kreq kmsg.Request, _ func(vnet.Response)) kmsg.Response {
	req := kreq.(*kmsg.CreatePartitionsRequest)
	resp := req.ResponseKind().(*kmsg.CreatePartitionsResponse)
	// Kafka: KIP-599, THROTTLING_QUOTA_EXCEEDED from v3.
	q := quotaCheck{q: b.quota, strict: r.Version >= 3}
	for _, rt := range req.Topics {
		st := kmsg.NewCreatePartitionsResponseTopic()
		st.Topic = rt.Topic
		err := b.topicAuthError(r, acl.OpAlter, rt.Topic)
		for _, a := range rt.Assignment {
			if len(a.Replicas) != 1 || a.Replicas[0] != b.nodeID {
				err = kerr.InvalidReplicaAssignment
			}
		}
		if err == nil {
			err = b.addPartitions(rt.Topic, rt.Count, req.ValidateOnly, q)
		}
		st.ErrorCode = errorCode(err)
		if err != nil {
			msg := err.Error()
			st.ErrorMessage = &msg
		}
		resp.Topics = append(resp.Topics, st)
	}
	resp.ThrottleMillis = q.throttleMs()
	return resp
}
