package quorum

// ListPartitionReassignments (46), every version kmsg knows (KIP-455):
// the reassignments under way, all of them or those of the partitions
// asked for.

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/controller"
	"github.com/varve/varve/metadata"
)

func init() {
	register(&api{key: kmsg.ListPartitionReassignments.Int16(), handle: handleListReassignments,
		refuse: func(_ kmsg.Request, code int16) kmsg.Response {
			resp := kmsg.NewPtrListPartitionReassignmentsResponse()
			resp.ErrorCode = code
			return resp
		}})
}

func handleListReassignments(_ *Node, c *controller.Controller, _ int64, kreq kmsg.Request) ([]metadata.Record, kmsg.Response, error) {
	req := kreq.(*kmsg.ListPartitionReassignmentsRequest)
	resp := kmsg.NewPtrListPartitionReassignmentsResponse()
	for _, r := range c.ListPartitionReassignments() {
		if !asked(req, r.Topic, r.Partition) {
			continue
		}
		if len(resp.Topics) == 0 || resp.Topics[len(resp.Topics)-1].Topic != r.Topic {
			rt := kmsg.NewListPartitionReassignmentsResponseTopic()
			rt.Topic = r.Topic
			resp.Topics = append(resp.Topics, rt)
		}
		rp := kmsg.NewListPartitionReassignmentsResponseTopicPartition()
		rp.Partition, rp.Replicas = r.Partition, r.Replicas
		rp.AddingReplicas, rp.RemovingReplicas = r.AddingReplicas, r.RemovingReplicas
		rt := &resp.Topics[len(resp.Topics)-1]
		rt.Partitions = append(rt.Partitions, rp)
	}
	return nil, resp, nil
}

// asked reports whether the request lists the partition (null topics:
// every partition).
func asked(req *kmsg.ListPartitionReassignmentsRequest, topic string, p int32) bool {
	if req.Topics == nil {
		return true
	}
	for _, t := range req.Topics {
		if t.Topic == topic && slices.Contains(t.Partitions, p) {
			return true
		}
	}
	return false
}
