package cluster

// CreatePartitions, versions 0-3: grow a topic's partition count,
// placed by the controller or by the request's manual assignments
// (checked as Kafka's controller checks them: on a single node they can
// name this node alone). The new partitions are recorded
// in the metadata first, then created; killed midway, the node creates
// the rest at its next start. They count against the controller
// mutation quota (KIP-599).

import (
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
	q := b.mutationCheck(r, r.Version >= 3)
	for _, rt := range req.Topics {
		st := kmsg.NewCreatePartitionsResponseTopic()
		st.Topic = rt.Topic
		err := b.topicAuthError(r, acl.OpAlter, rt.Topic)
		var as [][]int32
		for _, a := range rt.Assignment {
			as = append(as, a.Replicas)
		}
		if err == nil {
			err = b.addPartitions(rt.Topic, rt.Count, as, req.ValidateOnly, q)
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
