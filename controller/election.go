package controller

import (
	"slices"

	"github.com/varve/varve/metadata"
)

// election is how a partition's leader is chosen. Kafka:
// PartitionChangeBuilder.Election.
type election int

const (
	// electOnline keeps a valid leader, else takes the first replica in
	// assignment order that is in the ISR and active.
	electOnline election = iota
	// electPreferred takes the first replica in assignment order when it
	// is in the ISR and active, else does as electOnline.
	electPreferred
	// electUnclean does as electOnline and, when no ISR member is
	// active, takes the first active replica: the ISR becomes that
	// leader alone and its log is RECOVERING (KIP-704).
	electUnclean
)

// change is a wanted change of one partition: Kafka's
// PartitionChangeBuilder. Fields left nil keep the partition's value.
type change struct {
	topic    *metadata.Topic
	id       int32
	isr      []int32 // target ISR
	replicas []int32 // target replicas
	adding   []int32 // target adding replicas (with replicas, for a reassignment)
	removing []int32 // target removing replicas
	recovery *metadata.LeaderRecoveryState
	election election
	active   func(int32) bool // may lead and be in an ISR: registered, unfenced, not shutting down
}

// build returns the record for the change, and false when the change
// changes nothing. A record names a leader only when the leader moves,
// so that the leader epoch moves only then (the partition epoch moves
// with every record).
func (ch *change) build() (metadata.PartitionChangeRecord, bool) {
	p := &ch.topic.Partitions[ch.id]
	isr, replicas := or(ch.isr, p.ISR), or(ch.replicas, p.Replicas)
	adding, removing := or(ch.adding, p.AddingReplicas), or(ch.removing, p.RemovingReplicas)
	replicas, isr, adding, removing = completeReassignment(replicas, isr, adding, removing)
	leader, isr, unclean := ch.elect(p, replicas, isr)
	rec := metadata.PartitionChangeRecord{TopicID: ch.topic.ID, PartitionID: ch.id, Leader: metadata.NoLeaderChange}
	changed := false
	if leader != p.Leader {
		rec.Leader, changed = leader, true
	}
	if !slices.Equal(isr, p.ISR) {
		rec.ISR, changed = nonNil(isr), true
	}
	if !slices.Equal(replicas, p.Replicas) {
		rec.Replicas, changed = nonNil(replicas), true
	}
	if !slices.Equal(adding, p.AddingReplicas) || !slices.Equal(removing, p.RemovingReplicas) {
		rec.AddingReplicas, rec.RemovingReplicas, changed = nonNil(adding), nonNil(removing), true
	}
	recovery := p.LeaderRecovery
	if ch.recovery != nil {
		recovery = *ch.recovery
	}
	if unclean {
		recovery = metadata.Recovering
	}
	if recovery != p.LeaderRecovery {
		rec.LeaderRecovery, changed = &recovery, true
	}
	return rec, changed
}

// elect chooses the leader among replicas; it returns the ISR to record
// with it (the leader alone after an unclean election) and whether the
// election was unclean.
func (ch *change) elect(p *metadata.Partition, replicas, isr []int32) (int32, []int32, bool) {
	valid := func(r int32) bool {
		return slices.Contains(isr, r) && slices.Contains(replicas, r) && ch.active(r)
	}
	if ch.election == electPreferred && len(replicas) > 0 && valid(replicas[0]) {
		return replicas[0], isr, false
	}
	if p.Leader >= 0 && valid(p.Leader) {
		return p.Leader, isr, false
	}
	for _, r := range replicas {
		if valid(r) {
			return r, isr, false
		}
	}
	if ch.election == electUnclean {
		for _, r := range replicas {
			if ch.active(r) {
				return r, []int32{r}, true
			}
		}
	}
	return metadata.NoLeader, isr, false
}

// completeReassignment finishes a reassignment whose added replicas are
// all in the ISR (KIP-455): the replicas become the target set, the
// removed replicas leave the ISR. It does not finish one that would
// leave the ISR empty.
func completeReassignment(replicas, isr, adding, removing []int32) ([]int32, []int32, []int32, []int32) {
	if len(adding) == 0 && len(removing) == 0 {
		return replicas, isr, adding, removing
	}
	for _, r := range adding {
		if !slices.Contains(isr, r) {
			return replicas, isr, adding, removing
		}
	}
	target := without(replicas, removing...)
	newISR := without(isr, removing...)
	if len(newISR) == 0 {
		return replicas, isr, adding, removing
	}
	return target, newISR, nil, nil
}

// shrinkISR removes b from isr, except the last member: Kafka (KIP-841)
// keeps the last ISR member of a partition that loses it, so that the
// partition comes back with that replica, the only one known to hold
// every committed record, rather than never.
func shrinkISR(isr []int32, b int32) []int32 {
	out := without(isr, b)
	if len(out) == 0 {
		return isr
	}
	return out
}

func or(s, def []int32) []int32 {
	if s != nil {
		return s
	}
	return def
}

// nonNil makes an empty list non-nil, which a PartitionChangeRecord
// reads as "clear" rather than "unchanged".
func nonNil(s []int32) []int32 {
	if s == nil {
		return []int32{}
	}
	return s
}

// without returns s less the members of drop, in s's order.
func without(s []int32, drop ...int32) []int32 {
	out := make([]int32, 0, len(s))
	for _, r := range s {
		if !slices.Contains(drop, r) {
			out = append(out, r)
		}
	}
	return out
}
