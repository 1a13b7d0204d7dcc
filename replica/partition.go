package replica

import (
	"fmt"
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
	leaderEpoch atomic.Int32 // stamped on every batch this replica appends as leader

	mu     sync.Mutex
	notify chan struct{} // closed and replaced on every append
}

func newPartition(tp segment.TopicPartition, id TopicID, l *segment.Log, hw int64) *Partition {
	p := &Partition{TP: tp, TopicID: id, Log: l, notify: make(chan struct{})}
	p.hw.Store(min(max(hw, l.StartOffset()), l.EndOffset()))
	return p
}

// HighWatermark is the offset below which records are committed and
// visible to consumers.
func (p *Partition) HighWatermark() int64 { return p.hw.Load() }

// Wait returns a channel closed at the next append, truncation or
// deletion: a delayed fetch waits on it.
func (p *Partition) Wait() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.notify
}

func (p *Partition) wake() {
	p.mu.Lock()
	close(p.notify)
	p.notify = make(chan struct{})
	p.mu.Unlock()
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
	p.advanceHW(p.Log.EndOffset())
	p.wake()
	return info, nil
}

func (p *Partition) advanceHW(to int64) {
	for {
		cur := p.hw.Load()
		if to <= cur || p.hw.CompareAndSwap(cur, to) {
			return
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
