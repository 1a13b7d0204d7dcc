package replica

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
)

// ReplicaLog is what a partition's replication needs of its log: its
// bounds, appends as leader (offsets assigned here, the epoch stamped on
// every batch) and as follower (offsets and epochs as the leader wrote
// them), truncation, and a start offset that follows the leader's.
// *segment.Log satisfies it through a thin adapter; tests use a log in
// memory.
type ReplicaLog interface {
	StartOffset() int64
	EndOffset() int64
	// AppendAsLeader assigns offsets from EndOffset on to producer
	// batches, stamps epoch on each, and returns the last offset.
	AppendAsLeader(batches []byte, epoch int32) (lastOffset int64, err error)
	// AppendAsFollower appends batches whose offsets the leader assigned;
	// the first starts at EndOffset.
	AppendAsFollower(batches []byte) error
	TruncateTo(offset int64) error
	// TruncateFullyAndStartAt empties the log and restarts it at offset
	// (a follower whose leader's log starts past its own end).
	TruncateFullyAndStartAt(offset int64) error
	SetStartOffset(offset int64) error
}

// Role is what this replica is for its partition.
type Role int8

const (
	RoleNone Role = iota
	RoleLeader
	RoleFollower
)

func (r Role) String() string { return [...]string{"none", "leader", "follower"}[r] }

// LeaderAndISR is the controller's decision for a partition: the input of
// BecomeLeader and BecomeFollower, and the answer to an AlterPartition.
type LeaderAndISR struct {
	Leader         int32
	LeaderEpoch    int32
	PartitionEpoch int32
	ISR            []int32
	Replicas       []int32
}

// AlterPartition is the ISR change a leader proposes to the controller
// (KIP-497): its leader epoch, the partition epoch it saw, the new ISR.
type AlterPartition struct {
	Leader         int32
	LeaderEpoch    int32
	PartitionEpoch int32
	ISR            []int32
}

// ReplicationConfig holds the settings of one partition's replication.
type ReplicationConfig struct {
	LocalID             int32 // this broker's node.id
	MinInsyncReplicas   int   // min.insync.replicas (topic or broker)
	ReplicaLagTimeMaxMs int64 // replica.lag.time.max.ms, default 30000
}

// follower is what a leader knows of one follower from its fetches
// (Kafka's Replica and its ReplicaState).
type follower struct {
	logEnd             int64 // the fetch offset of its last fetch; -1 until one
	lastCaughtUpMs     int64
	lastFetchLeaderEnd int64 // the leader's log end at that fetch
	lastFetchMs        int64
}

// Replication is one partition's replication state on one broker, as
// Kafka's Partition keeps it: role, leader epoch, ISR, high watermark,
// the followers' progress (on a leader), the leader-epoch cache, and the
// AlterPartition in flight. It is a deterministic state machine: no
// goroutines, no clock (every event carries the time in milliseconds),
// and its only effects are calls on its ReplicaLog and the
// AlterPartition requests it hands out (TakeAlterPartition). It is not
// safe for concurrent use: the caller serialises events.
//
// Invariants: the high watermark never exceeds the log end offset and,
// on a leader, never decreases; the epoch cache never names an epoch
// past the last batch of the log; while an AlterPartition is in flight
// no other is proposed, and the maximal ISR (the committed one plus a
// pending addition) bounds the high watermark.
type Replication struct {
	cfg    ReplicationConfig
	log    ReplicaLog
	epochs *EpochCache

	role           Role
	leader         int32
	leaderEpoch    int32
	partitionEpoch int32
	isr, replicas  []int32
	hw             int64
	epochStart     int64 // leader: the log end when it took leadership

	followers  map[int32]*follower
	ineligible []int32         // brokers fenced or shutting down: kept out of the ISR and of the high watermark
	inflight   *AlterPartition // proposed, not yet answered
	maximal    []int32         // the ISR for the high watermark while inflight is set
	unsent     bool            // inflight is to be (re)sent
}

// NewReplication restores a replica from its log, its epoch cache and the
// high watermark of its checkpoint (bounded to the log).
func NewReplication(cfg ReplicationConfig, log ReplicaLog, epochs *EpochCache, hw int64) *Replication {
	if epochs == nil {
		epochs = &EpochCache{}
	}
	epochs.TruncateFromEnd(log.EndOffset())
	r := &Replication{cfg: cfg, log: log, epochs: epochs, leader: -1, leaderEpoch: -1, partitionEpoch: -1}
	r.hw = min(max(hw, log.StartOffset()), log.EndOffset())
	return r
}

// Role, LeaderEpoch, HighWatermark, ISR and MaximalISR describe the
// current state.
func (r *Replication) Role() Role            { return r.role }
func (r *Replication) Leader() int32         { return r.leader }
func (r *Replication) LeaderEpoch() int32    { return r.leaderEpoch }
func (r *Replication) PartitionEpoch() int32 { return r.partitionEpoch }
func (r *Replication) HighWatermark() int64  { return r.hw }
func (r *Replication) ISR() []int32          { return slices.Clone(r.isr) }
func (r *Replication) EpochCache() *EpochCache {
	return r.epochs
}

// SetMinInsyncReplicas applies a new min.insync.replicas (a topic's
// configuration changed): Kafka reads it at every append.
func (r *Replication) SetMinInsyncReplicas(n int) { r.cfg.MinInsyncReplicas = n }

// SetIneligible names the brokers that may not join the ISR (Kafka's
// isReplicaIsrEligible: fenced, in controlled shutdown): a leader
// neither proposes them nor waits for them as replicas about to join
// when it moves the high watermark.
func (r *Replication) SetIneligible(ids []int32, nowMs int64) {
	r.ineligible = slices.Clone(ids)
	r.maybeIncrementHW(nowMs)
}

// Replicas is the partition's assignment as last decided.
func (r *Replication) Replicas() []int32 { return slices.Clone(r.replicas) }

// MaximalISR is the ISR the high watermark waits for: the committed ISR
// and, while an expansion is in flight, the replica being added.
func (r *Replication) MaximalISR() []int32 {
	if r.inflight != nil {
		return slices.Clone(r.maximal)
	}
	return slices.Clone(r.isr)
}

// BecomeLeader makes this replica the leader the controller elected. A
// decision with an older leader epoch is refused (FENCED_LEADER_EPOCH);
// the same epoch with a newer partition epoch updates the ISR (a change
// the controller made, or the answer to our AlterPartition arriving
// through the metadata). A new leadership records (its epoch, its log
// end) in the epoch cache at once (KAFKA-7415), and every follower in the
// ISR counts as caught up now.
func (r *Replication) BecomeLeader(s LeaderAndISR, nowMs int64) error {
	if s.Leader != r.cfg.LocalID {
		return fmt.Errorf("become leader: the decision names leader %d, this is %d", s.Leader, r.cfg.LocalID)
	}
	if err := r.checkDecision(s); err != nil {
		return err
	}
	if r.role == RoleLeader && s.LeaderEpoch == r.leaderEpoch {
		if s.PartitionEpoch > r.partitionEpoch && s.Replicas != nil {
			r.assign(s.Replicas, s.ISR, nowMs)
		}
		r.applyISR(s)
		r.maybeIncrementHW(nowMs)
		return nil
	}
	r.set(RoleLeader, s)
	r.epochStart = r.log.EndOffset()
	r.epochs.Assign(s.LeaderEpoch, r.epochStart)
	r.followers = map[int32]*follower{}
	r.assign(s.Replicas, s.ISR, nowMs)
	r.maybeIncrementHW(nowMs)
	return nil
}

// assign makes a leader's followers the partition's replicas: one that
// is new starts with no fetch state (caught up now if the decision puts
// it in the ISR), one that is gone is forgotten, the others keep theirs.
// A reassignment changes the replicas under the same leader epoch
// (KIP-455: the target replicas are added, then the old ones removed),
// so a leader that kept only the replicas of its election would refuse
// the fetches of the replicas being added, and let one removed still
// hold its high watermark back. Kafka: Partition.updateAssignmentAndIsr.
func (r *Replication) assign(replicas, isr []int32, nowMs int64) {
	for id := range r.followers {
		if !slices.Contains(replicas, id) {
			delete(r.followers, id)
		}
	}
	for _, id := range replicas {
		if id == r.cfg.LocalID || r.followers[id] != nil {
			continue
		}
		f := &follower{logEnd: -1, lastFetchLeaderEnd: -1}
		if slices.Contains(isr, id) {
			f.lastCaughtUpMs = nowMs
		}
		r.followers[id] = f
	}
}

// BecomeFollower makes this replica follow s.Leader. Its log is not
// truncated here: the first fetch from the new leader finds where the
// logs diverge (KIP-595's truncation on fetch), so that nothing is cut on
// the strength of the high watermark alone (KIP-101).
func (r *Replication) BecomeFollower(s LeaderAndISR) error {
	if s.Leader == r.cfg.LocalID {
		return fmt.Errorf("become follower: the decision names this broker (%d) the leader", s.Leader)
	}
	if err := r.checkDecision(s); err != nil {
		return err
	}
	r.set(RoleFollower, s)
	r.followers = nil
	return nil
}

func (r *Replication) checkDecision(s LeaderAndISR) error {
	if s.LeaderEpoch < r.leaderEpoch || (s.LeaderEpoch == r.leaderEpoch && s.PartitionEpoch < r.partitionEpoch) {
		return fmt.Errorf("%w: leader epoch %d, partition epoch %d is older than %d, %d",
			kerr.FencedLeaderEpoch, s.LeaderEpoch, s.PartitionEpoch, r.leaderEpoch, r.partitionEpoch)
	}
	return nil
}

func (r *Replication) set(role Role, s LeaderAndISR) {
	r.role, r.leader, r.leaderEpoch = role, s.Leader, s.LeaderEpoch
	r.partitionEpoch, r.isr, r.replicas = s.PartitionEpoch, slices.Clone(s.ISR), slices.Clone(s.Replicas)
	r.inflight, r.maximal, r.unsent = nil, nil, false
}

// applyISR takes a newer ISR from the controller for the current
// leadership; an AlterPartition it answers is no longer in flight.
func (r *Replication) applyISR(s LeaderAndISR) {
	if s.PartitionEpoch <= r.partitionEpoch && r.inflight == nil {
		return
	}
	r.partitionEpoch, r.isr = s.PartitionEpoch, slices.Clone(s.ISR)
	if s.Replicas != nil { // an AlterPartition answer does not carry them
		r.replicas = slices.Clone(s.Replicas)
	}
	r.inflight, r.maximal, r.unsent = nil, nil, false
}

// CheckLeaderEpoch applies KIP-320's fencing to a request's
// CurrentLeaderEpoch (-1: not checked): older than ours is
// FENCED_LEADER_EPOCH, newer is UNKNOWN_LEADER_EPOCH (this broker has not
// heard of it yet).
func (r *Replication) CheckLeaderEpoch(current int32) error {
	switch {
	case current < 0 || current == r.leaderEpoch:
		return nil
	case current < r.leaderEpoch:
		return kerr.FencedLeaderEpoch
	}
	return kerr.UnknownLeaderEpoch
}
