package controller

import "github.com/varve/varve/metadata"

// ListPartitionReassignments (api key 46), KIP-455: the reassignments
// under way, as the partitions record them.

// OngoingReassignment is a reassignment under way.
type OngoingReassignment struct {
	Topic            string
	Partition        int32
	Replicas         []int32
	AddingReplicas   []int32
	RemovingReplicas []int32
}

// ListPartitionReassignments lists the reassignments under way, in
// topic then partition order.
func (c *Controller) ListPartitionReassignments() []OngoingReassignment {
	var out []OngoingReassignment
	for _, ref := range c.partitionsWhere((*metadata.Partition).Reassigning) {
		p := ref.p()
		out = append(out, OngoingReassignment{ref.topic.Name, ref.id, p.Replicas, p.AddingReplicas, p.RemovingReplicas})
	}
	return out
}
