package quorum

// AlterPartitionReassignments (45), every version kmsg knows (KIP-455):
// start, replace or cancel (null replicas) reassignments
// (controller.AlterPartitionReassignments).

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/controller"
	"github.com/varve/varve/metadata"
)

func init() {
	register(&api{key: kmsg.AlterPartitionAssignments.Int16(), handle: handleAlterReassignments,
		refuse: func(_ kmsg.Request, code int16) kmsg.Response {
			resp := kmsg.NewPtrAlterPartitionAssignmentsResponse()
			resp.ErrorCode = code
			return resp
		}})
}

func handleAlterReassignments(_ *Node, c *controller.Controller, _ int64, kreq kmsg.Request) ([]metadata.Record, kmsg.Response, error) {
	req := kreq.(*kmsg.AlterPartitionAssignmentsRequest)
	var reqs []controller.Reassignment
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			reqs = append(reqs, controller.Reassignment{Topic: t.Topic, Partition: p.Partition, Replicas: p.Replicas})
		}
	}
	out, err := c.AlterPartitionReassignments(reqs)
	if err != nil {
		return nil, nil, err
	}
	resp := kmsg.NewPtrAlterPartitionAssignmentsResponse()
	for _, t := range req.Topics {
		rt := kmsg.NewAlterPartitionAssignmentsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			e := out.Results[controller.TopicPartition{Topic: t.Topic, Partition: p.Partition}]
			rp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.ErrorMessage = p.Partition, errorCode(e), errorMessage(e)
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return out.Records, resp, nil
}
