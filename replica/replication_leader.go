package replica

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
)

// AppendAsLeader appends producer batches. With acks=all (-1) and a
// committed ISR smaller than min.insync.replicas nothing is appended
// (NOT_ENOUGH_REPLICAS, Kafka's check before the append). It returns the
// last offset; a caller with acks=all then waits until ProduceStatus
// says the high watermark passed it.
func (r *Replication) AppendAsLeader(batches []byte, acks int16, nowMs int64) (int64, error) {
	if r.role != RoleLeader {
		return -1, kerr.NotLeaderForPartition
	}
	if acks == -1 && len(r.isr) < r.cfg.MinInsyncReplicas {
		return -1, fmt.Errorf("%w: ISR %v is smaller than min.insync.replicas %d", kerr.NotEnoughReplicas, r.isr, r.cfg.MinInsyncReplicas)
	}
	last, err := r.log.AppendAsLeader(batches, r.leaderEpoch)
	if err != nil {
		return -1, err
	}
	r.maybeIncrementHW(nowMs)
	return last, nil
}

// ProduceStatus is Kafka's checkEnoughReplicasReachOffset for an acks=all
// produce whose records end before requiredOffset: not done while the
// high watermark is below it; done with NOT_ENOUGH_REPLICAS_AFTER_APPEND
// when it got there with a maximal ISR smaller than min.insync.replicas;
// done with NOT_LEADER_OR_FOLLOWER once this replica is no longer the
// leader.
func (r *Replication) ProduceStatus(requiredOffset int64) (done bool, err error) {
	switch {
	case r.role != RoleLeader:
		return true, kerr.NotLeaderForPartition
	case r.hw < requiredOffset:
		return false, nil
	case len(r.MaximalISR()) < r.cfg.MinInsyncReplicas:
		return true, kerr.NotEnoughReplicasAfterAppend
	}
	return true, nil
}

// FetchRequest is one partition of a Fetch, as this replica sees it.
type FetchRequest struct {
	ReplicaID          int32 // the follower's node id; -1 for a consumer
	FetchOffset        int64
	LastFetchedEpoch   int32 // follower fetches (v12+); -1 when absent
	CurrentLeaderEpoch int32 // KIP-320; -1 when absent
	NowMs              int64
}

// EpochEnd is where an epoch ends: the DivergingEpoch of a fetch answer.
type EpochEnd struct {
	Epoch     int32
	EndOffset int64
}

// FetchDecision says how to answer a fetch: an error, or a diverging
// epoch and no records, or records read from FetchOffset up to ReadUpTo
// (the high watermark for a consumer, the log end for a follower).
type FetchDecision struct {
	Err            error
	Diverging      *EpochEnd
	ReadUpTo       int64
	HighWatermark  int64
	LogStartOffset int64
}

// Fetch decides a fetch: KIP-320's epoch fencing, KIP-595's divergence
// check for a follower that names its last fetched epoch, offset bounds,
// and for a follower its fetch state (Kafka's updateFetchStateOrThrow),
// which may expand the ISR and advance the high watermark. A follower
// replica serves consumers up to its own high watermark (KIP-392).
func (r *Replication) Fetch(req FetchRequest) FetchDecision {
	d := FetchDecision{HighWatermark: r.hw, LogStartOffset: r.log.StartOffset(), ReadUpTo: r.hw}
	if d.Err = r.checkFetcher(req); d.Err != nil {
		return d
	}
	if req.ReplicaID >= 0 && req.LastFetchedEpoch >= 0 {
		epoch, end := r.epochs.EndOffsetFor(req.LastFetchedEpoch, r.log.EndOffset())
		if epoch < req.LastFetchedEpoch || end < req.FetchOffset {
			d.Diverging = &EpochEnd{Epoch: epoch, EndOffset: end}
			return d
		}
	}
	if req.FetchOffset < d.LogStartOffset || req.FetchOffset > r.log.EndOffset() {
		d.Err = fmt.Errorf("%w: fetch offset %d outside [%d, %d]", kerr.OffsetOutOfRange, req.FetchOffset, d.LogStartOffset, r.log.EndOffset())
		return d
	}
	if req.ReplicaID >= 0 {
		r.updateFollower(req)
		d.ReadUpTo, d.HighWatermark = r.log.EndOffset(), r.hw
	}
	return d
}

func (r *Replication) checkFetcher(req FetchRequest) error {
	if err := r.CheckLeaderEpoch(req.CurrentLeaderEpoch); err != nil {
		return err
	}
	switch {
	case r.role == RoleNone, req.ReplicaID >= 0 && r.role != RoleLeader:
		return kerr.NotLeaderForPartition
	case req.ReplicaID >= 0 && r.followers[req.ReplicaID] == nil:
		return fmt.Errorf("%w: replica %d is not assigned %v", kerr.NotLeaderForPartition, req.ReplicaID, r.replicas)
	}
	return nil
}

// updateFollower is Kafka's Replica.updateFetchStateOrThrow: the follower
// has caught up at this fetch if it asked from the leader's log end, or
// at its previous fetch if it now asks from the log end the leader had
// then.
func (r *Replication) updateFollower(req FetchRequest) {
	f, leaderEnd := r.followers[req.ReplicaID], r.log.EndOffset()
	switch {
	case req.FetchOffset >= leaderEnd:
		f.lastCaughtUpMs = max(f.lastCaughtUpMs, req.NowMs)
	case req.FetchOffset >= f.lastFetchLeaderEnd:
		f.lastCaughtUpMs = max(f.lastCaughtUpMs, f.lastFetchMs)
	}
	f.logEnd, f.lastFetchLeaderEnd, f.lastFetchMs = req.FetchOffset, leaderEnd, req.NowMs
	r.maybeExpandISR(req.ReplicaID)
	r.maybeIncrementHW(req.NowMs)
}

// caughtUp is Kafka's isCaughtUp: at the leader's log end, or caught up
// within replica.lag.time.max.ms.
func (r *Replication) caughtUp(f *follower, nowMs int64) bool {
	return f.logEnd == r.log.EndOffset() || nowMs-f.lastCaughtUpMs <= r.cfg.ReplicaLagTimeMaxMs
}

// maybeIncrementHW moves the leader's high watermark to the smallest log
// end over itself, the maximal ISR and the replicas caught up enough to
// be about to join it; never backwards, and not while the committed ISR
// is smaller than min.insync.replicas (capped by the replica count).
func (r *Replication) maybeIncrementHW(nowMs int64) {
	if r.role != RoleLeader || len(r.isr) < min(r.cfg.MinInsyncReplicas, len(r.replicas)) {
		return
	}
	hw, maximal := r.log.EndOffset(), r.MaximalISR()
	for id, f := range r.followers {
		joining := f.logEnd >= 0 && r.caughtUp(f, nowMs) && !slices.Contains(r.ineligible, id) // fetched, and about to be added
		if f.logEnd < hw && (slices.Contains(maximal, id) || joining) {
			hw = f.logEnd
		}
	}
	r.hw = max(r.hw, hw)
}

// HighWatermarkKnown says whether the leader's high watermark has
// reached the start of its own epoch. Until then ListOffsets for the
// latest offset answers OFFSET_NOT_AVAILABLE, so that no client sees an
// offset a new leader might still lose (Kafka, KIP-207).
func (r *Replication) HighWatermarkKnown() bool { return r.role != RoleLeader || r.hw >= r.epochStart }

// OffsetForLeaderEpoch answers OffsetsForLeaderEpoch (API key 23) for
// clients and followers: where requested ends in this leader's log.
func (r *Replication) OffsetForLeaderEpoch(currentLeaderEpoch, requested int32) (EpochEnd, error) {
	if err := r.CheckLeaderEpoch(currentLeaderEpoch); err != nil {
		return EpochEnd{UndefinedEpoch, UndefinedOffset}, err
	}
	if r.role != RoleLeader {
		return EpochEnd{UndefinedEpoch, UndefinedOffset}, kerr.NotLeaderForPartition
	}
	e, o := r.epochs.EndOffsetFor(requested, r.log.EndOffset())
	return EpochEnd{e, o}, nil
}
