package group

import (
	"container/heap"
	"time"
)

// timerKind names what a deadline is for; each replaces Kafka's
// DelayedOperation of the same role.
type timerKind int8

const (
	timerHeartbeat       timerKind = iota // a member's session (DelayedHeartbeat)
	timerPending                          // a MEMBER_ID_REQUIRED member's session (DelayedHeartbeat, isPending)
	timerJoin                             // a group's rebalance (DelayedJoin, InitialDelayedJoin)
	timerSync                             // SyncGroup stragglers after a join (DelayedSync)
	timerRetention                        // the offsets retention check (offsets.retention.check.interval.ms)
	timerConsumerSession                  // a consumer group member's session (group.consumer.session.timeout.ms)
	timerConsumerRevoke                   // a consumer group member revoking partitions (its rebalance timeout)
)

type timerKey struct {
	kind   timerKind
	group  string
	member string
}

type timerEntry struct {
	at  time.Time
	seq uint64
	key timerKey
}

// timers is a deadline queue with replacement and cancellation: setting a
// key again replaces its deadline, and superseded heap entries are
// skipped when they surface. Entries with equal deadlines fire in the
// order they were set, so a run is deterministic. Not safe for
// concurrent use.
type timers struct {
	h    timerHeap
	live map[timerKey]timerEntry // key -> its current entry
	seq  uint64
}

func newTimers() timers { return timers{live: map[timerKey]timerEntry{}} }

func (t *timers) set(k timerKey, at time.Time) {
	t.seq++
	e := timerEntry{at: at, seq: t.seq, key: k}
	t.live[k] = e
	heap.Push(&t.h, e)
	if len(t.h) > 4*len(t.live)+1024 {
		t.compact()
	}
}

// compact rebuilds the heap from the live entries, so that members that
// heartbeat often under a long session timeout do not grow it without
// bound.
func (t *timers) compact() {
	t.h = t.h[:0]
	for _, e := range t.live {
		t.h = append(t.h, e)
	}
	heap.Init(&t.h)
}

func (t *timers) cancel(k timerKey) { delete(t.live, k) }

func (t *timers) pending(k timerKey) bool { _, ok := t.live[k]; return ok }

// dropStale pops superseded entries off the top of the heap.
func (t *timers) dropStale() {
	for len(t.h) > 0 {
		top := t.h[0]
		if e, ok := t.live[top.key]; ok && e.seq == top.seq {
			return
		}
		heap.Pop(&t.h)
	}
}

// next is the earliest live deadline.
func (t *timers) next() (time.Time, bool) {
	t.dropStale()
	if len(t.h) == 0 {
		return time.Time{}, false
	}
	return t.h[0].at, true
}

// due pops the earliest live entry if its deadline is not after now.
func (t *timers) due(now time.Time) (timerKey, bool) {
	t.dropStale()
	if len(t.h) == 0 || t.h[0].at.After(now) {
		return timerKey{}, false
	}
	e := heap.Pop(&t.h).(timerEntry)
	delete(t.live, e.key)
	return e.key, true
}

type timerHeap []timerEntry

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h timerHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *timerHeap) Push(x any)   { *h = append(*h, x.(timerEntry)) }
func (h *timerHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
