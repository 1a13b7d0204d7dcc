package controller

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/varve/varve/metadata"
)

// AlterPartitionReassignments (api key 45), KIP-455. A reassignment to target replicas records the
// partition's replicas as target followed by the replicas it removes,
// with the adding and removing lists. The added replicas catch up as
// followers; when the leader's AlterPartition brings the last of them
// into the ISR, the same record finishes the reassignment: the replicas
// become the target, the removed ones leave the ISR, and a leader being
// removed hands over to the first target replica in the ISR (see
// completeReassignment). A reassignment that adds nothing finishes at
// once.

// Reassignment asks to move a partition to Replicas; nil Replicas
// cancels the reassignment under way.
type Reassignment struct {
	Topic     string
	Partition int32
	Replicas  []int32
}

// ReassignResponse gives one error per partition asked for (nil when
// accepted).
type ReassignResponse struct {
	Records []metadata.Record
	Results map[TopicPartition]error
}

// AlterPartitionReassignments starts, replaces or cancels reassignments.
// Errors: UNKNOWN_TOPIC_OR_PARTITION, INVALID_REPLICA_ASSIGNMENT (empty,
// duplicate or unregistered replicas; a cancel that needs an unclean
// election the topic does not allow), NO_REASSIGNMENT_IN_PROGRESS (a
// cancel with nothing to cancel).
func (c *Controller) AlterPartitionReassignments(reqs []Reassignment) (ReassignResponse, error) {
	resp := ReassignResponse{Results: map[TopicPartition]error{}}
	for _, r := range reqs {
		tp := TopicPartition{r.Topic, r.Partition}
		ch, err := c.reassignChange(r)
		resp.Results[tp] = err
		if ch == nil {
			continue
		}
		rec, changed := ch.build()
		if !changed {
			continue
		}
		if err := c.propose([]metadata.Record{rec}); err != nil {
			return ReassignResponse{}, err
		}
		resp.Records = append(resp.Records, rec)
	}
	return resp, nil
}

func (c *Controller) reassignChange(r Reassignment) (*change, error) {
	t, ok := c.img.Topic(r.Topic)
	if !ok || r.Partition < 0 || int(r.Partition) >= len(t.Partitions) {
		return nil, kerr.UnknownTopicOrPartition
	}
	p := &t.Partitions[r.Partition]
	original := without(p.Replicas, p.AddingReplicas...)
	ch := c.newChange(t, r.Partition)
	if r.Replicas == nil {
		return c.cancelChange(ch, p, original)
	}
	if err := c.validateTarget(r.Replicas); err != nil {
		return nil, err
	}
	removing := without(original, r.Replicas...)
	ch.replicas = append(slices.Clone(r.Replicas), removing...)
	ch.adding, ch.removing = nonNil(without(r.Replicas, original...)), nonNil(removing)
	ch.isr = keep(p.ISR, ch.replicas) // a replaced reassignment's additions leave
	return ch, nil
}

// cancelChange reverts a partition to its replicas before the
// reassignment. Kafka: PartitionReassignmentRevert.
func (c *Controller) cancelChange(ch *change, p *metadata.Partition, original []int32) (*change, error) {
	if !p.Reassigning() {
		return nil, kerr.NoReassignmentInProgress
	}
	ch.replicas, ch.adding, ch.removing = original, []int32{}, []int32{}
	ch.isr = keep(p.ISR, original)
	if len(ch.isr) == 0 && ch.election != electUnclean {
		return nil, kerr.InvalidReplicaAssignment
	}
	return ch, nil
}

func (c *Controller) validateTarget(replicas []int32) error {
	if len(replicas) == 0 || hasDuplicates(replicas) {
		return kerr.InvalidReplicaAssignment
	}
	for _, r := range replicas {
		if _, ok := c.img.Broker(r); !ok {
			return kerr.InvalidReplicaAssignment
		}
	}
	return nil
}

// keep returns the members of s that are in set, in s's order.
func keep(s, set []int32) []int32 {
	out := []int32{}
	for _, r := range s {
		if slices.Contains(set, r) {
			out = append(out, r)
		}
	}
	return out
}
