package replica

import (
	"errors"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
)

// maybeExpandISR proposes adding a follower that has caught up to the
// high watermark and to the start of this leader's epoch (Kafka's
// isFollowerInSync) and is eligible, unless an ISR change is already in
// flight.
func (r *Replication) maybeExpandISR(id int32) {
	f := r.followers[id]
	if r.inflight != nil || slices.Contains(r.isr, id) || slices.Contains(r.ineligible, id) || f.logEnd < r.hw || f.logEnd < r.epochStart {
		return
	}
	next := append(slices.Clone(r.isr), id)
	slices.Sort(next)
	r.propose(next, next)
}

// Tick runs Kafka's isr-expiration check (every half of
// replica.lag.time.max.ms): followers in the ISR that have not caught up
// within replica.lag.time.max.ms are proposed for removal. While the
// shrink is in flight the high watermark still waits for them (the
// maximal ISR is the current one).
func (r *Replication) Tick(nowMs int64) {
	if r.role != RoleLeader || r.inflight != nil {
		return
	}
	var out []int32
	for _, id := range r.isr {
		if f := r.followers[id]; f != nil && !r.caughtUp(f, nowMs) {
			out = append(out, id)
		}
	}
	if len(out) == 0 {
		return
	}
	next := slices.DeleteFunc(slices.Clone(r.isr), func(id int32) bool { return slices.Contains(out, id) })
	r.propose(next, slices.Clone(r.isr))
}

func (r *Replication) propose(isr, maximal []int32) {
	r.inflight = &AlterPartition{Leader: r.cfg.LocalID, LeaderEpoch: r.leaderEpoch, PartitionEpoch: r.partitionEpoch, ISR: isr}
	r.maximal, r.unsent = maximal, true
}

// TakeAlterPartition hands out the AlterPartition to send to the
// controller, once per proposal (and again after a retriable failure).
func (r *Replication) TakeAlterPartition() (AlterPartition, bool) {
	if r.inflight == nil || !r.unsent {
		return AlterPartition{}, false
	}
	r.unsent = false
	a := *r.inflight
	a.ISR = slices.Clone(a.ISR)
	return a, true
}

// HandleAlterPartitionResponse applies the controller's answer to the
// AlterPartition in flight. Success installs the new ISR and partition
// epoch (unless the answer belongs to an older leadership or partition
// epoch). INVALID_UPDATE_VERSION, FENCED_LEADER_EPOCH, NEW_LEADER_ELECTED,
// INELIGIBLE_REPLICA and UNKNOWN_TOPIC_OR_PARTITION drop the proposal, as
// Kafka does: the next metadata update or fetch decides again. Any other
// error (the controller was unreachable) sends it again.
func (r *Replication) HandleAlterPartitionResponse(s LeaderAndISR, err error, nowMs int64) {
	if r.inflight == nil {
		return
	}
	switch {
	case err == nil:
		if s.LeaderEpoch == r.leaderEpoch && s.PartitionEpoch >= r.partitionEpoch {
			r.applyISR(s)
		} else {
			r.inflight, r.maximal, r.unsent = nil, nil, false
		}
	case isFinalAlterPartitionError(err):
		r.inflight, r.maximal, r.unsent = nil, nil, false
	default:
		r.unsent = true
	}
	r.maybeIncrementHW(nowMs)
}

func isFinalAlterPartitionError(err error) bool {
	for _, e := range []error{kerr.InvalidUpdateVersion, kerr.FencedLeaderEpoch, kerr.NewLeaderElected,
		kerr.IneligibleReplica, kerr.UnknownTopicOrPartition} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
