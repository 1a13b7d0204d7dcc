package replica

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/varve/varve/pagecache"
	"github.com/varve/varve/segment"
)

// The replicated side of a Partition: its Replication, driven under the
// partition's lock by the broker's image changes (MakeLeader,
// MakeFollower), producers (AppendRecordsToLeader), followers' fetches
// (ReadForFollower), its own fetcher (NextFetch, HandleFetchResponse)
// and the ISR checks (Tick, AlterPartition's outbox and answers).

// replicated is a Partition's replication state. REQUIRES its mutex for
// every field.
type replicated struct {
	sync.Mutex
	repl       *Replication // nil until the partition is told its role
	rlog       replicaLog
	cfg        ReplicationConfig
	epochs     *EpochCache // loaded with the partition, until repl owns it
	store      EpochStore  // leader-epoch-checkpoint; nil: not persisted
	storedGen  uint64      // the epoch cache generation last stored
	restoredHW int64       // the checkpointed high watermark at open
}

// EpochStore keeps a partition's leader-epoch-checkpoint file.
type EpochStore interface {
	Store(data []byte) error
}

func wallClockMs() int64 { return time.Now().UnixMilli() }

// replicaLog is the ReplicationLog over a partition's Log. l is set at
// the start of every operation (the log is swapped while its directory
// is offline); last is the AppendInfo of the last leader append.
type replicaLog struct {
	l           Log
	last        segment.AppendInfo
	coordinator bool // the append in progress is of transaction markers
}

func (a *replicaLog) StartOffset() int64 { return a.l.StartOffset() }
func (a *replicaLog) EndOffset() int64   { return a.l.EndOffset() }

func (a *replicaLog) AppendAsLeader(b []byte, epoch int32) (int64, error) {
	var info segment.AppendInfo
	var err error
	if a.coordinator {
		info, err = appendMarkers(a.l, b, epoch)
	} else {
		info, err = a.l.AppendWithEpoch(b, epoch)
	}
	a.last = info
	return info.LastOffset, err
}

func (a *replicaLog) AppendAsFollower(b []byte) error {
	_, err := a.l.AppendReplicated(b)
	return err
}

func (a *replicaLog) TruncateTo(offset int64) error { return a.l.TruncateTo(offset) }
func (a *replicaLog) TruncateFullyAndStartAt(offset int64) error {
	return a.l.TruncateFullyAndStartAt(offset)
}
func (a *replicaLog) SetStartOffset(offset int64) error { return a.l.SetStartOffset(offset) }

// PartitionOptions configure a Partition's replication.
type PartitionOptions struct {
	Config ReplicationConfig
	// Epochs is the leader-epoch cache loaded from the partition's
	// checkpoint; nil is empty.
	Epochs *EpochCache
	// Store persists the cache whenever it changes; nil does not.
	Store EpochStore
	// RestoredHW is the high watermark from replication-offset-checkpoint
	// (-1: none): where a replicated partition starts, before its
	// followers or its leader tell it more.
	RestoredHW int64
	// NowMs is the clock of the state machine; nil is the wall clock.
	NowMs func() int64
	// AlterReady is called (without the partition's lock) when an
	// AlterPartition is ready to be sent.
	AlterReady func()
}

// Configure sets the partition's replication options. It is called once,
// before the partition is told its role.
func (p *Partition) Configure(o PartitionOptions) {
	p.st.Lock()
	defer p.st.Unlock()
	p.st.cfg, p.st.epochs, p.st.store, p.st.restoredHW = o.Config, o.Epochs, o.Store, o.RestoredHW
	if o.NowMs != nil {
		p.now = o.NowMs
	}
	p.kick = o.AlterReady
}

// moveEpochStore points the epoch cache's checkpoint at s (the log
// moved to another log dir) and writes the cache there now, so that a
// checkpoint the move copied before a last epoch change is not stale.
func (p *Partition) moveEpochStore(s EpochStore) {
	p.st.Lock()
	defer p.st.Unlock()
	p.st.store = s
	if p.st.repl == nil {
		return
	}
	c := p.st.repl.EpochCache()
	if s.Store(c.MarshalCheckpoint()) == nil {
		p.st.storedGen = c.Generation()
	}
}

// replicationLocked returns the partition's state machine over l,
// making it at the first decision. REQUIRES p.st.
func (p *Partition) replicationLocked(l Log) *Replication {
	p.st.rlog.l = l
	if p.st.repl == nil {
		hw := p.st.restoredHW
		if hw < 0 {
			hw = 0
		}
		p.st.repl = NewReplication(p.st.cfg, &p.st.rlog, p.st.epochs, hw)
		p.st.epochs = nil
	}
	return p.st.repl
}

// syncLocked mirrors the state machine's decisions into the atomics
// readers use and persists the epoch cache when it changed. REQUIRES
// p.st.
func (p *Partition) syncLocked() (alter bool, err error) {
	r := p.st.repl
	p.hw.Store(min(r.HighWatermark(), p.followerEnd.Load()))
	p.leaderEpoch.Store(max(r.LeaderEpoch(), 0))
	p.follower.Store(r.Role() != RoleLeader)
	if c := r.EpochCache(); p.st.store != nil && c.Generation() != p.st.storedGen {
		if err = p.st.store.Store(c.MarshalCheckpoint()); err == nil {
			p.st.storedGen = c.Generation()
		}
	}
	return r.inflight != nil && r.unsent, err
}

// errNotReplicated: an event of replication reached a partition never
// told its role.
var errNotReplicated = fmt.Errorf("%w: the partition has not been told its role", kerr.NotLeaderForPartition)

// decide runs a controller's decision on the state machine (made at the
// first), see event.
func (p *Partition) decide(f func(r *Replication) error) error { return p.run(true, f) }

// event runs f on the state machine under the partition's lock, then
// mirrors its state, and wakes the waiters and the AlterPartition
// sender. A partition never told its role answers errNotReplicated.
func (p *Partition) event(f func(r *Replication) error) error { return p.run(false, f) }

func (p *Partition) run(create bool, f func(r *Replication) error) error {
	l, err := p.current()
	if err != nil {
		return err
	}
	p.st.Lock()
	if p.st.repl == nil && !create {
		p.st.Unlock()
		return errNotReplicated
	}
	err = f(p.replicationLocked(l))
	alter, serr := p.syncLocked()
	p.st.Unlock()
	p.wake()
	if alter && p.kick != nil {
		p.kick()
	}
	if err != nil {
		return err
	}
	return serr
}

// Replicated reports whether the partition has been told its role.
func (p *Partition) Replicated() bool {
	p.st.Lock()
	defer p.st.Unlock()
	return p.st.repl != nil
}

// MakeLeader makes this replica the leader the controller chose (Kafka's
// Partition.makeLeader): delayed fetches and produces are retried, and
// the new epoch is recorded in the epoch cache and its checkpoint.
func (p *Partition) MakeLeader(s LeaderAndISR, nowMs int64) error {
	return p.decide(func(r *Replication) error { return r.BecomeLeader(s, nowMs) })
}

// MakeFollower makes this replica follow s.Leader (Kafka's
// Partition.makeFollower): produces waiting on it complete with
// NOT_LEADER_OR_FOLLOWER.
func (p *Partition) MakeFollower(s LeaderAndISR) error {
	return p.decide(func(r *Replication) error { return r.BecomeFollower(s) })
}

// SetIneligible names the brokers that may not join the ISR (see
// Replication.SetIneligible).
func (p *Partition) SetIneligible(ids []int32) {
	_ = p.event(func(r *Replication) error { r.SetIneligible(ids, p.now()); return nil })
}

// State describes the replication state: role, leader, epochs, ISR.
func (p *Partition) State() (role Role, s LeaderAndISR) {
	p.st.Lock()
	defer p.st.Unlock()
	r := p.st.repl
	if r == nil {
		return RoleLeader, LeaderAndISR{Leader: p.st.cfg.LocalID, LeaderEpoch: p.LeaderEpoch(), ISR: []int32{p.st.cfg.LocalID}, Replicas: []int32{p.st.cfg.LocalID}}
	}
	return r.Role(), LeaderAndISR{Leader: r.Leader(), LeaderEpoch: r.LeaderEpoch(), PartitionEpoch: r.PartitionEpoch(), ISR: r.ISR(), Replicas: r.Replicas()}
}

// EpochEntries lists the leader-epoch cache.
func (p *Partition) EpochEntries() []EpochEntry {
	p.st.Lock()
	defer p.st.Unlock()
	if p.st.repl == nil {
		if p.st.epochs == nil {
			return nil
		}
		return p.st.epochs.Entries()
	}
	return p.st.repl.EpochCache().Entries()
}

// AppendRecordsToLeader appends a producer's batches (Kafka's
// Partition.appendRecordsToLeader). With requiredAcks -1 and an ISR
// smaller than minInsync nothing is appended: NOT_ENOUGH_REPLICAS.
// minInsync <= 0 keeps the partition's setting. A follower answers
// NOT_LEADER_OR_FOLLOWER.
func (p *Partition) AppendRecordsToLeader(records []byte, requiredAcks int16, minInsync int) (segment.AppendInfo, error) {
	return p.appendToLeader(records, requiredAcks, minInsync, false)
}

// appendToLeader is AppendRecordsToLeader; coordinator appends
// transaction markers (Kafka's AppendOrigin.COORDINATOR) instead of a
// producer's batches.
func (p *Partition) appendToLeader(records []byte, requiredAcks int16, minInsync int, coordinator bool) (segment.AppendInfo, error) {
	p.waitSwap()
	p.st.Lock()
	if p.st.repl == nil {
		p.st.Unlock()
		if requiredAcks == -1 && minInsync > 1 {
			return segment.AppendInfo{}, fmt.Errorf("%w: one replica, min.insync.replicas %d", kerr.NotEnoughReplicas, minInsync)
		}
		return p.appendStandalone(records, coordinator)
	}
	p.st.Unlock()
	var info segment.AppendInfo
	err := p.event(func(r *Replication) error {
		if minInsync > 0 {
			r.SetMinInsyncReplicas(minInsync)
		}
		p.st.rlog.last, p.st.rlog.coordinator = segment.AppendInfo{}, coordinator
		defer func() { p.st.rlog.coordinator = false }()
		_, err := r.AppendAsLeader(records, requiredAcks, p.now())
		info = p.st.rlog.last
		return err
	})
	return info, err
}

// ProduceStatus says whether an acks=all produce whose records end
// before requiredOffset is done, and how (Kafka's
// checkEnoughReplicasReachOffset): see Replication.ProduceStatus.
func (p *Partition) ProduceStatus(requiredOffset int64) (bool, error) {
	p.st.Lock()
	defer p.st.Unlock()
	if p.st.repl == nil {
		switch {
		case !p.IsLeader():
			return true, kerr.NotLeaderForPartition
		case p.HighWatermark() >= requiredOffset:
			return true, nil
		}
		return false, nil
	}
	if done, err := p.st.repl.ProduceStatus(requiredOffset); done || err != nil {
		if err == nil && p.HighWatermark() < requiredOffset {
			return false, nil // held back by SetFollowerEndOffset
		}
		return done, err
	}
	return false, nil
}

// capReplicated is SetFollowerEndOffset on a partition told its role:
// the published high watermark is held at offset (never below where it
// is). It reports false for a partition never told its role.
func (p *Partition) capReplicated(offset int64) bool {
	p.st.Lock()
	if p.st.repl == nil {
		p.st.Unlock()
		return false
	}
	p.followerEnd.Store(max(offset, p.hw.Load()))
	_, _ = p.syncLocked()
	p.st.Unlock()
	p.wake()
	return true
}

// resignReplicated is ResignLeadership on a partition told its role: it
// follows no leader in its current epochs, so produces waiting on it
// answer NOT_LEADER_OR_FOLLOWER. It reports false for a partition never
// told its role.
func (p *Partition) resignReplicated() bool {
	p.st.Lock()
	r := p.st.repl
	p.st.Unlock()
	if r == nil {
		return false
	}
	_ = p.event(func(r *Replication) error {
		return r.BecomeFollower(LeaderAndISR{Leader: -1, LeaderEpoch: r.LeaderEpoch(), PartitionEpoch: r.PartitionEpoch(),
			ISR: r.ISR(), Replicas: r.Replicas()})
	})
	return true
}

// CheckLeaderEpoch applies KIP-320's fencing to a request's
// CurrentLeaderEpoch (-1: unchecked) and requires this replica to lead:
// FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH or NOT_LEADER_OR_FOLLOWER.
func (p *Partition) CheckLeaderEpoch(current int32) error {
	p.st.Lock()
	defer p.st.Unlock()
	if p.st.repl == nil {
		if current >= 0 && current < p.LeaderEpoch() {
			return kerr.FencedLeaderEpoch
		} else if current > p.LeaderEpoch() {
			return kerr.UnknownLeaderEpoch
		}
		return nil
	}
	if err := p.st.repl.CheckLeaderEpoch(current); err != nil {
		return err
	}
	if p.st.repl.Role() != RoleLeader {
		return kerr.NotLeaderForPartition
	}
	return nil
}

// HighWatermarkKnown says whether the leader's high watermark reached
// its epoch's start (until then ListOffsets for the latest offset
// answers OFFSET_NOT_AVAILABLE).
func (p *Partition) HighWatermarkKnown() bool {
	p.st.Lock()
	defer p.st.Unlock()
	return p.st.repl == nil || p.st.repl.HighWatermarkKnown()
}

// OffsetForLeaderEpoch answers OffsetsForLeaderEpoch (API key 23).
func (p *Partition) OffsetForLeaderEpoch(current, requested int32) (EpochEnd, error) {
	l, err := p.current()
	if err != nil {
		return EpochEnd{UndefinedEpoch, UndefinedOffset}, err
	}
	p.st.Lock()
	defer p.st.Unlock()
	if p.st.repl == nil { // the single replica leads: its own cache
		c := p.st.epochs
		if c == nil || len(c.entries) == 0 {
			// Every batch carries the one epoch it has led in.
			c = &EpochCache{entries: []EpochEntry{{p.LeaderEpoch(), l.StartOffset()}}}
		}
		e, o := c.EndOffsetFor(requested, l.EndOffset())
		return EpochEnd{e, o}, nil
	}
	p.st.rlog.l = l
	return p.st.repl.OffsetForLeaderEpoch(current, requested)
}

// ReadForFollower serves a follower's fetch (Kafka's fetchRecords for a
// replica): KIP-320 fencing, KIP-595's diverging epoch, the follower's
// fetch state (which may expand the ISR and advance the high watermark,
// completing produces), then records up to the log end.
func (p *Partition) ReadForFollower(req FetchRequest, maxBytes int, minOneBatch bool) (FetchDecision, pagecache.Region, error) {
	l, err := p.current()
	if err != nil {
		return FetchDecision{}, pagecache.Region{}, err
	}
	p.st.Lock()
	if p.st.repl == nil {
		p.st.Unlock()
		return FetchDecision{}, pagecache.Region{}, fmt.Errorf("%w: replica %d: %s has no followers", kerr.NotLeaderForPartition, req.ReplicaID, p.TP)
	}
	before := p.st.repl.HighWatermark()
	if req.NowMs == 0 {
		req.NowMs = p.now()
	}
	p.st.rlog.l = l
	d := p.st.repl.Fetch(req)
	alter, serr := p.syncLocked()
	moved := p.st.repl.HighWatermark() != before
	p.st.Unlock()
	if moved {
		p.wake()
	}
	if alter && p.kick != nil {
		p.kick()
	}
	if d.Err != nil || d.Diverging != nil || serr != nil {
		return d, pagecache.Region{}, firstErr(d.Err, serr)
	}
	region, err := l.ReadBounded(req.FetchOffset, maxBytes, d.ReadUpTo, minOneBatch)
	return d, region, err
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// NextFetch is what this follower asks its leader next.
func (p *Partition) NextFetch() (FetchRequest, bool) {
	l, err := p.current()
	if err != nil {
		return FetchRequest{}, false
	}
	p.st.Lock()
	defer p.st.Unlock()
	if p.st.repl == nil {
		return FetchRequest{}, false
	}
	p.st.rlog.l = l
	return p.st.repl.NextFetch(p.now())
}

// HandleFetchResponse applies the leader's answer on this follower:
// records appended (producer state rebuilt from them), truncation on a
// diverging epoch, a log restarted at the leader's start when the
// leader no longer has this replica's end, the high watermark and log
// start offset adopted.
func (p *Partition) HandleFetchResponse(resp FetchResponse) error {
	return p.HandleFetchResponseTo(FetchRequest{FetchOffset: -1}, resp)
}

// HandleFetchResponseTo is HandleFetchResponse for the answer to asked:
// an answer to a fetch made under another leader epoch, or from another
// offset, is stale (a fetcher of the previous leader answered late) and
// is dropped, as Kafka's fetcher drops it (AbstractFetcherThread checks
// the partition's fetch state against the request's). FetchOffset -1
// skips the check.
func (p *Partition) HandleFetchResponseTo(asked FetchRequest, resp FetchResponse) error {
	return p.event(func(r *Replication) error {
		if asked.FetchOffset >= 0 && (r.Role() != RoleFollower || r.LeaderEpoch() != asked.CurrentLeaderEpoch ||
			p.st.rlog.EndOffset() != asked.FetchOffset) {
			return nil
		}
		if resp.Err != nil && errors.Is(resp.Err, kerr.OffsetOutOfRange) {
			if reset, err := r.HandleOutOfRange(resp.LogStartOffset); reset || err != nil {
				return err
			}
		}
		return r.HandleFetchResponse(resp)
	})
}

// Tick runs the ISR expiration check (Kafka's maybeShrinkIsr).
func (p *Partition) Tick(nowMs int64) {
	_ = p.event(func(r *Replication) error { r.Tick(nowMs); return nil })
}

// TakeAlterPartition hands out the partition's AlterPartition to send,
// if one is ready.
func (p *Partition) TakeAlterPartition() (AlterPartition, bool) {
	p.st.Lock()
	defer p.st.Unlock()
	if p.st.repl == nil {
		return AlterPartition{}, false
	}
	return p.st.repl.TakeAlterPartition()
}

// HandleAlterPartitionResponse applies the controller's answer.
func (p *Partition) HandleAlterPartitionResponse(s LeaderAndISR, err error, nowMs int64) {
	_ = p.event(func(r *Replication) error { r.HandleAlterPartitionResponse(s, err, nowMs); return nil })
}

// startMoved follows a raised log start offset in the epoch cache.
func (p *Partition) startMoved(start int64) {
	p.st.Lock()
	defer p.st.Unlock()
	if p.st.repl != nil {
		p.st.repl.EpochCache().TruncateFromStart(start)
		_, _ = p.syncLocked()
	}
}
