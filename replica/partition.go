package replica

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/varve/varve/pagecache"
	"github.com/varve/varve/segment"
)

// TopicID is a topic's 16-byte UUID (Kafka's topic id).
type TopicID [16]byte

// Partition is this node's replica of one partition.
type Partition struct {
	TP      segment.TopicPartition
	TopicID TopicID
	Log     *segment.Log

	hw          atomic.Int64
	followerEnd atomic.Int64 // the other in-sync replicas' lowest log end offset (MaxInt64: none)
	leaderEpoch atomic.Int32 // stamped on every batch this replica appends as leader
	follower    atomic.Bool  // leadership lost (a leader until told otherwise)

	// watchers are the delayed operations (fetches, produces) waiting
	// for an event on this partition: an append, a high-watermark
	// advance, a truncation, a deletion or a leadership change completes
	// those it satisfies.
	watchers WatchList

	mu     sync.Mutex
	notify chan struct{} // made by Wait, closed by the next event
}

func newPartition(tp segment.TopicPartition, id TopicID, l *segment.Log, hw int64) *Partition {
	p := &Partition{TP: tp, TopicID: id, Log: l}
	p.hw.Store(min(max(hw, l.StartOffset()), l.EndOffset()))
	p.followerEnd.Store(math.MaxInt64)
	return p
}

// HighWatermark is the offset below which records are committed and
// visible to consumers.
func (p *Partition) HighWatermark() int64 { return p.hw.Load() }

// Watchers is the partition's key in a Purgatory.
func (p *Partition) Watchers() *WatchList { return &p.watchers }

// wake completes the delayed operations an event on the partition
// satisfies (Kafka's checkAndComplete after an append, a high-watermark
// change, a truncation, a deletion or a leadership change). It runs
// them on the caller's goroutine.
func (p *Partition) wake() {
	p.mu.Lock()
	if p.notify != nil {
		close(p.notify)
		p.notify = nil
	}
	p.mu.Unlock()
	p.watchers.CheckAndComplete()
}

// Wait returns a channel closed at the next event on the partition (an
// append, a high-watermark advance, a deletion): a waiter outside a
// Purgatory (a tool, a test) sleeps on it. It costs nothing until called.
func (p *Partition) Wait() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.notify == nil {
		p.notify = make(chan struct{})
	}
	return p.notify
}

// IsLeader reports whether this replica leads the partition.
func (p *Partition) IsLeader() bool { return !p.follower.Load() }

// ResignLeadership makes the replica a follower: the delayed produces
// waiting on it complete with NOT_LEADER_OR_FOLLOWER and its delayed
// fetches answer at once, as in Kafka when a leader becomes a follower.
func (p *Partition) ResignLeadership() {
	p.follower.Store(true)
	p.wake()
}

// SetFollowerEndOffset records the lowest log end offset among the other
// in-sync replicas: the high watermark is the minimum of it and this
// replica's own end offset, and never moves backwards. Until replication
// exists nothing calls it and the high watermark is the log end offset;
// tests hold the high watermark back with it.
func (p *Partition) SetFollowerEndOffset(offset int64) {
	p.followerEnd.Store(offset)
	if p.advanceHW(min(p.Log.EndOffset(), offset)) {
		p.wake()
	}
}

// LeaderEpoch is the epoch of this replica's leadership (0 until
// leader elections exist).
func (p *Partition) LeaderEpoch() int32 { return p.leaderEpoch.Load() }

// AppendAsLeader appends producer batches and advances the high
// watermark: with a single replica, an appended record is committed.
// Each batch is stamped with the leader epoch, as Kafka's leader does
// (the CRC does not cover it).
func (p *Partition) AppendAsLeader(records []byte) (segment.AppendInfo, error) {
	info, err := p.Log.AppendWithEpoch(records, p.leaderEpoch.Load())
	if err != nil {
		return info, err
	}
	p.advanceHW(min(p.Log.EndOffset(), p.followerEnd.Load()))
	p.wake()
	return info, nil
}

// advanceHW raises the high watermark to to and reports whether it moved.
func (p *Partition) advanceHW(to int64) bool {
	for {
		cur := p.hw.Load()
		if to <= cur {
			return false
		}
		if p.hw.CompareAndSwap(cur, to) {
			return true
		}
	}
}

// Read returns the committed records from offset, up to maxBytes, as a
// file region. With minOneBatch a first batch larger than maxBytes is
// returned whole (KIP-74).
func (p *Partition) Read(offset int64, maxBytes int, minOneBatch bool) (pagecache.Region, error) {
	return p.Log.ReadBounded(offset, maxBytes, p.hw.Load(), minOneBatch)
}

// DeleteRecordsBefore raises the log start offset (Kafka's DeleteRecords),
// never past the high watermark.
func (p *Partition) DeleteRecordsBefore(offset int64) (int64, error) {
	hw := p.hw.Load()
	if offset == -1 {
		offset = hw
	}
	if offset < 0 || offset > hw {
		return 0, fmt.Errorf("%w: delete before %d, high watermark %d", segment.ErrOffsetOutOfRange, offset, hw)
	}
	if err := p.Log.SetStartOffset(offset); err != nil {
		return 0, err
	}
	return p.Log.StartOffset(), nil
}
