package controller

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/varve/varve/metadata"
)

// Manual replica assignments in CreateTopics and CreatePartitions, as
// Kafka's ReplicationControlManager checks them
// (validateManualPartitionAssignment): every replica list non-empty,
// naming registered brokers, each once, all lists of one length (the
// topic's replication factor), and at least one replica of each
// partition active (unfenced, not shutting down). A new partition's ISR
// is its active replicas in assignment order, the first of them
// leading. CreateTopics takes partition indexes 0, 1, 2, ... and -1 for
// both the partition count and the replication factor beside them
// (INVALID_REQUEST otherwise).

// ReplicaAssignment places one partition: its replicas, the preferred
// leader first.
type ReplicaAssignment struct {
	Partition int32
	Replicas  []int32
}

// CheckTopicAssignments checks a CreateTopics topic's manual
// assignments against img, as the active controller does; a single
// node checks them the same way over its own image.
func CheckTopicAssignments(img *metadata.Image, numPartitions int32, rf int16, as []ReplicaAssignment) error {
	if err := CheckAssignmentShape(numPartitions, rf, as); err != nil {
		return err
	}
	want := -1
	for _, a := range as {
		if err := checkAssignment(img, a.Partition, a.Replicas, want); err != nil {
			return err
		}
		want = len(a.Replicas)
	}
	return nil
}

// CheckAssignmentShape is what CheckTopicAssignments checks without
// the image: -1 for the partition count and the replication factor,
// partition indexes 0, 1, 2, ... (A broker checks it before it forwards
// the request.)
func CheckAssignmentShape(numPartitions int32, rf int16, as []ReplicaAssignment) error {
	switch {
	case rf != -1:
		return &refusal{kerr.InvalidRequest, "A manual partition assignment was specified, but replication factor was not set to -1."}
	case numPartitions != -1:
		return &refusal{kerr.InvalidRequest, "A manual partition assignment was specified, but numPartitions was not set to -1."}
	case len(as) > MaxPartitionsPerRequest:
		return kerr.PolicyViolation
	}
	for i, a := range as {
		if a.Partition != int32(i) {
			return invalidAssignment("partitions should be a consecutive 0-based integer sequence")
		}
	}
	return nil
}

// checkAssignment checks one partition's replicas; want is the
// replication factor the other partitions have (-1: none yet).
func checkAssignment(img *metadata.Image, partition int32, replicas []int32, want int) error {
	if len(replicas) == 0 {
		return invalidAssignment("The manual partition assignment includes an empty replica list.")
	}
	sorted := slices.Sorted(slices.Values(replicas))
	for i, id := range sorted {
		if _, ok := img.Broker(id); !ok {
			return invalidAssignment(fmt.Sprintf("The manual partition assignment includes broker %d, but no such broker is registered.", id))
		}
		if i > 0 && sorted[i-1] == id {
			return invalidAssignment(fmt.Sprintf("The manual partition assignment includes the broker %d more than once.", id))
		}
	}
	if want >= 0 && len(replicas) != want {
		return invalidAssignment(fmt.Sprintf("The manual partition assignment includes a partition with %d replica(s), "+
			"but this is not consistent with previous partitions, which have %d replica(s).", len(replicas), want))
	}
	if len(activeReplicas(img, replicas)) == 0 {
		return invalidAssignment(fmt.Sprintf("All brokers specified in the manual partition assignment for partition %d "+
			"are fenced or in controlled shutdown.", partition))
	}
	return nil
}

// CheckPartitionAssignments checks a CreatePartitions request's
// assignments for the partitions from..count-1 of a topic whose
// partitions have rf replicas.
func CheckPartitionAssignments(img *metadata.Image, from, count int32, rf int, as [][]int32) error {
	if int64(len(as)) != int64(count)-int64(from) {
		return invalidAssignment(fmt.Sprintf("Attempted to add %d additional partition(s), but only %d assignment(s) were specified.",
			count-from, len(as)))
	}
	for i, replicas := range as {
		if err := checkAssignment(img, from+int32(i), replicas, rf); err != nil {
			return err
		}
	}
	return nil
}

// activeReplicas are replicas' active brokers, in order.
func activeReplicas(img *metadata.Image, replicas []int32) []int32 {
	var out []int32
	for _, id := range replicas {
		if b, ok := img.Broker(id); ok && !b.Fenced && !b.InControlledShutdown {
			out = append(out, id)
		}
	}
	return out
}

// assignedPartitions records partitions from, from+1, ... placed as
// as says: the ISR is the active replicas, the first of them leads.
func assignedPartitions(img *metadata.Image, id metadata.TopicID, from int32, as [][]int32) []metadata.Record {
	recs := make([]metadata.Record, 0, len(as))
	for i, replicas := range as {
		isr := activeReplicas(img, replicas)
		recs = append(recs, metadata.PartitionRecord{PartitionID: from + int32(i), TopicID: id,
			Replicas: slices.Clone(replicas), ISR: isr, Leader: isr[0]})
	}
	return recs
}

func invalidAssignment(msg string) error {
	return &refusal{kerr.InvalidReplicaAssignment, msg}
}
