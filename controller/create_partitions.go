package controller

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/varve/varve/metadata"
)

// CreatePartitions (api key 37) as the controller decides it: new
// partitions placed as CreateTopics places them, or by the request's
// manual assignments (assignments.go). Not done here: validate-only
// requests (the request handler's).

// CreatePartitions grows topic to count partitions, the new ones with
// the replication factor of its first partition, placed by assignments
// (one replica list per new partition) when there are any. Kafka:
// ReplicationControlManager.createPartitions.
func (c *Controller) CreatePartitions(topic string, count int32, assignments [][]int32) (CreatePartitionsResponse, error) {
	t, ok := c.img.Topic(topic)
	switch {
	case !ok:
		return CreatePartitionsResponse{Err: kerr.UnknownTopicOrPartition}, nil
	case len(t.Partitions) == 0 || count <= int32(len(t.Partitions)):
		return CreatePartitionsResponse{Err: kerr.InvalidPartitions}, nil
	case int64(count)-int64(len(t.Partitions)) > MaxPartitionsPerRequest:
		return CreatePartitionsResponse{Err: kerr.PolicyViolation}, nil
	}
	rf, from := len(t.Partitions[0].Replicas), int32(len(t.Partitions))
	var recs []metadata.Record
	switch {
	case assignments != nil:
		if err := CheckPartitionAssignments(c.img, from, count, rf, assignments); err != nil {
			return CreatePartitionsResponse{Err: err}, nil
		}
		recs = assignedPartitions(c.img, t.ID, from, assignments)
	case rf > c.usableBrokers():
		return CreatePartitionsResponse{Err: kerr.InvalidReplicationFactor}, nil
	default:
		recs = c.newPartitions(t.ID, from, count-from, rf)
	}
	if err := c.propose(recs); err != nil {
		return CreatePartitionsResponse{}, err
	}
	return CreatePartitionsResponse{Records: recs}, nil
}

// CreatePartitionsResponse is the outcome of CreatePartitions.
type CreatePartitionsResponse struct {
	Records []metadata.Record
	Err     error
}
