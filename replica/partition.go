package replica

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/varve/varve/logdir"
	"github.com/varve/varve/pagecache"
	"github.com/varve/varve/segment"
)

// TopicID is a topic's 16-byte UUID (Kafka's topic id).
type TopicID = logdir.TopicID

// Log is what a Partition needs of its log. *segment.Log satisfies it;
// tests use an in-memory one.
type Log interface {
	// AppendWithEpoch appends producer batches, assigning offsets and
	// stamping the leader epoch.
	AppendWithEpoch(records []byte, leaderEpoch int32) (segment.AppendInfo, error)
	// ReadBounded returns whole batches from offset below upTo.
	ReadBounded(offset int64, maxBytes int, upTo int64, minOneBatch bool) (pagecache.Region, error)
	// ReadBytes copies whole batches from offset.
	ReadBytes(offset int64, maxBytes int) ([]byte, error)
	StartOffset() int64
	EndOffset() int64
	// SetStartOffset raises the log start offset.
	SetStartOffset(offset int64) error
	// OffsetForTime is the first offset whose batch's max timestamp is
	// at least ts.
	OffsetForTime(ts int64) (offset, timestamp int64, found bool, err error)
	// Segments describes the log's segments (their max timestamps).
	Segments() []segment.SegmentInfo
	// AppendReplicated appends batches whose offsets and epochs the
	// leader assigned (a follower's append); producer state is rebuilt
	// from them.
	AppendReplicated(records []byte) (segment.AppendInfo, error)
	// TruncateTo removes every batch at or after offset.
	TruncateTo(offset int64) error
	// TruncateFullyAndStartAt empties the log and restarts it at offset.
	TruncateFullyAndStartAt(offset int64) error
}

// logRef lets a Partition swap its log atomically (an interface value
// cannot sit in an atomic.Pointer).
type logRef struct{ Log }

// Partition is this node's replica of one partition. Until it is told
// its role (MakeLeader, MakeFollower) it is the single replica of its
// partition and leads it (a node without replication): appends are
// committed at once, unless a test holds the high watermark back with
// SetFollowerEndOffset. Once told, a Replication (the state machine of
// replication.go) decides, under st's lock; the atomics below mirror
// what it decided, so that reads take no lock.
type Partition struct {
	TP      segment.TopicPartition
	TopicID TopicID

	log         atomic.Pointer[logRef] // nil while its log directory is offline
	hw          atomic.Int64
	followerEnd atomic.Int64 // the other in-sync replicas' lowest log end offset (MaxInt64: none)
	leaderEpoch atomic.Int32 // stamped on every batch this replica appends as leader
	follower    atomic.Bool  // leadership lost (a leader until told otherwise)

	// watchers are the delayed operations (fetches, produces) waiting
	// for an event on this partition: an append, a high-watermark
	// advance, a truncation, a deletion, a leadership change or the log
	// going offline or back completes those it satisfies.
	watchers WatchList

	mu     sync.Mutex
	notify chan struct{} // made by Wait, closed by the next event
	// swapped is closed when the swap of the partition's log for its
	// copy in another log dir ends (nil: none under way). REQUIRES mu.
	swapped chan struct{}

	st   replicated
	now  func() int64 // milliseconds, the state machine's clock
	kick func()       // tells the owner an AlterPartition is ready; may be nil
}

// NewPartition makes a replica over l with high watermark hw (clamped to
// the log's offsets).
func NewPartition(tp segment.TopicPartition, id TopicID, l Log, hw int64) *Partition {
	p := &Partition{TP: tp, TopicID: id, now: wallClockMs}
	p.st.restoredHW = hw
	p.followerEnd.Store(math.MaxInt64)
	p.setLog(l, hw)
	return p
}

// setLog installs l (nil: offline), clamping the high watermark to it.
// It ends a swap under way: appends waiting for it go on.
// The swap ends before the waiters wake: a delayed fetch they complete
// reads the new log instead of waiting for the swap.
func (p *Partition) setLog(l Log, hw int64) {
	if l == nil {
		p.log.Store(nil)
		p.endSwap()
		p.wake()
		return
	}
	p.hw.Store(min(max(hw, l.StartOffset()), l.EndOffset()))
	p.st.Lock()
	if p.st.repl != nil { // back from offline: the state machine's word
		p.hw.Store(min(max(p.st.repl.HighWatermark(), l.StartOffset()), l.EndOffset()))
	}
	p.st.Unlock()
	p.log.Store(&logRef{l})
	p.endSwap()
	p.wake()
}

// maxSwapWait bounds how long an append or a read waits for a log swap.
const maxSwapWait = 5 * time.Second

// beginSwap takes the log away while the log manager swaps it for its
// copy in another log dir (AlterReplicaLogDirs): appends wait for the
// swap (Kafka's hold the partition's lock that
// replaceCurrentWithFutureLog takes), and so do reads (current), which
// Kafka serves under the same lock: they are then served from the new
// log. setLog ends it.
func (p *Partition) beginSwap() {
	p.mu.Lock()
	if p.swapped == nil {
		p.swapped = make(chan struct{})
	}
	p.mu.Unlock()
	p.log.Store(nil)
}

func (p *Partition) endSwap() {
	p.mu.Lock()
	if p.swapped != nil {
		close(p.swapped)
		p.swapped = nil
	}
	p.mu.Unlock()
}

// waitSwap waits, at most maxSwapWait, for a log swap under way.
func (p *Partition) waitSwap() {
	p.mu.Lock()
	ch := p.swapped
	p.mu.Unlock()
	if ch == nil {
		return
	}
	t := time.NewTimer(maxSwapWait)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	}
}

// current returns the partition's log, or ErrOffline (Kafka's
// KAFKA_STORAGE_ERROR) while its log directory is offline. During a
// swap of the log for its copy in another log dir it waits for the new
// log (at most maxSwapWait), holding no lock.
func (p *Partition) current() (Log, error) {
	r, err := p.ref()
	if err != nil {
		return nil, err
	}
	return r.Log, nil
}

func (p *Partition) ref() (*logRef, error) {
	r := p.log.Load()
	if r == nil {
		p.waitSwap()
		r = p.log.Load()
	}
	if r == nil {
		return nil, fmt.Errorf("%s: %w", p.TP, logdir.ErrOffline)
	}
	return r, nil
}

// read runs f on the partition's log. A read that fails because a swap
// closed the log under it (a closed log ends reads in progress with
// ErrOffsetOutOfRange) runs again on the log the swap installed, so a
// consumer never sees the swap as an offset out of range.
func read[T any](p *Partition, f func(Log) (T, error)) (T, error) {
	r, err := p.ref()
	if err != nil {
		var zero T
		return zero, err
	}
	v, err := f(r.Log)
	if err == nil || p.log.Load() == r {
		return v, err
	}
	if r2, err2 := p.ref(); err2 == nil && r2 != r {
		return f(r2.Log)
	}
	return v, err
}

// Online says whether the partition's log is available.
func (p *Partition) Online() bool { return p.log.Load() != nil }

// Available is Online once a swap of the partition's log under way
// ended (waiting at most maxSwapWait): what a read finds.
func (p *Partition) Available() bool {
	_, err := p.ref()
	return err == nil
}

// HighWatermark is the offset below which records are committed and
// visible to consumers.
func (p *Partition) HighWatermark() int64 { return p.hw.Load() }

// StartOffset is the log start offset, -1 while offline.
func (p *Partition) StartOffset() int64 {
	l, err := p.current()
	if err != nil {
		return -1
	}
	return l.StartOffset()
}

// EndOffset is the log end offset, -1 while offline.
func (p *Partition) EndOffset() int64 {
	l, err := p.current()
	if err != nil {
		return -1
	}
	return l.EndOffset()
}

// LostOffsets is how many offsets below its recovery point the log was
// found missing when it was opened (segment.RecoveryReport); 0 while
// offline or for a log that does not report recovery.
func (p *Partition) LostOffsets() int64 {
	l, err := p.current()
	if err != nil {
		return 0
	}
	if r, ok := l.(interface{ Recovery() segment.RecoveryReport }); ok {
		return r.Recovery().LostOffsets()
	}
	return 0
}

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
	if p.resignReplicated() {
		return
	}
	p.follower.Store(true)
	p.wake()
}

// SetFollowerEndOffset records the lowest log end offset among the other
// in-sync replicas: the high watermark is the minimum of it and this
// replica's own end offset, and never moves backwards. Nothing in the
// broker calls it (the followers' fetches move the high watermark of a
// replicated partition); tests hold the high watermark back with it, as
// an in-sync replica that has not fetched would, on a partition told its
// role or not.
func (p *Partition) SetFollowerEndOffset(offset int64) {
	if p.capReplicated(offset) {
		return
	}
	p.followerEnd.Store(offset)
	l, err := p.current()
	if err != nil {
		return
	}
	if p.advanceHW(min(l.EndOffset(), offset)) {
		p.wake()
	}
}

// LeaderEpoch is the epoch of this replica's leadership (0 until it is
// told one by MakeLeader or MakeFollower).
func (p *Partition) LeaderEpoch() int32 { return p.leaderEpoch.Load() }

// AppendAsLeader appends producer batches and advances the high
// watermark: with a single replica, an appended record is committed.
// Each batch is stamped with the leader epoch, as Kafka's leader does
// (the CRC does not cover it).
func (p *Partition) AppendAsLeader(records []byte) (segment.AppendInfo, error) {
	return p.AppendRecordsToLeader(records, 1, 0)
}

// appendStandalone is AppendAsLeader of a partition never told its role.
func (p *Partition) appendStandalone(records []byte, coordinator bool) (segment.AppendInfo, error) {
	l, err := p.current()
	if err != nil {
		return segment.AppendInfo{}, err
	}
	var info segment.AppendInfo
	if coordinator {
		info, err = appendMarkers(l, records, p.leaderEpoch.Load())
	} else {
		info, err = l.AppendWithEpoch(records, p.leaderEpoch.Load())
	}
	if err != nil {
		return info, err
	}
	p.advanceHW(min(l.EndOffset(), p.followerEnd.Load()))
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
	return read(p, func(l Log) (pagecache.Region, error) {
		return l.ReadBounded(offset, maxBytes, p.hw.Load(), minOneBatch)
	})
}

// readTo reads whole batches from offset below upTo.
func (p *Partition) readTo(offset int64, maxBytes int, upTo int64, minOneBatch bool) (pagecache.Region, error) {
	return read(p, func(l Log) (pagecache.Region, error) {
		return l.ReadBounded(offset, maxBytes, upTo, minOneBatch)
	})
}

// ReadBytes copies whole batches from offset, up to maxBytes (and at
// least one batch), for readers inside the broker (the group
// coordinator loading __consumer_offsets).
func (p *Partition) ReadBytes(offset int64, maxBytes int) ([]byte, error) {
	return read(p, func(l Log) ([]byte, error) { return l.ReadBytes(offset, maxBytes) })
}

// DeleteRecordsBefore raises the log start offset (Kafka's DeleteRecords),
// never past the high watermark.
func (p *Partition) DeleteRecordsBefore(offset int64) (int64, error) {
	l, err := p.current()
	if err != nil {
		return 0, err
	}
	hw := p.hw.Load()
	if offset == -1 {
		offset = hw
	}
	if offset < 0 || offset > hw {
		return 0, fmt.Errorf("%w: delete before %d, high watermark %d", segment.ErrOffsetOutOfRange, offset, hw)
	}
	if err := l.SetStartOffset(offset); err != nil {
		return 0, err
	}
	p.startMoved(l.StartOffset())
	return l.StartOffset(), nil
}
