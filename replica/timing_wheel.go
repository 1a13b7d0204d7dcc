package replica

import (
	"container/heap"
	"math"
)

// Kafka's hierarchical timing wheel (org.apache.kafka.server.util.timer:
// TimingWheel, TimerTaskList, SystemTimer): level 0 has wheelSize buckets
// of tickMs each; an entry beyond its span goes to an overflow wheel
// whose tick is the whole span of the level below, created when first
// needed. Adding and removing an entry is O(1); buckets, not entries, are
// ordered (a heap, Kafka's DelayQueue), and when a bucket of an upper
// level comes due its entries fall to finer levels (or expire).
//
// Kafka's defaults: tick 1 ms, 20 buckets.
const (
	wheelTickMs = 1
	wheelSize   = 20
)

// timingWheel is the timer interface over a hierarchy of wheels.
type timingWheel struct {
	root  *wheelLevel
	queue bucketHeap  // buckets holding entries, by expiration
	due   wheelBucket // entries added when already due
	count int
}

// wheelLevel is one wheel of the hierarchy.
type wheelLevel struct {
	tick, interval int64
	current        int64 // a multiple of tick
	buckets        [wheelSize]wheelBucket
	overflow       *wheelLevel
}

// wheelBucket is a doubly linked list of entries sharing one slot
// (Kafka's TimerTaskList), with the slot's start time as expiration.
type wheelBucket struct {
	head       timerEntry // sentinel
	expiration int64      // -1 when not queued
	index      int        // in the heap, -1 when not queued
}

func newTimingWheel(startMs int64) *timingWheel {
	w := &timingWheel{root: newWheelLevel(wheelTickMs, startMs)}
	w.due.init()
	return w
}

func newWheelLevel(tick, start int64) *wheelLevel {
	l := &wheelLevel{tick: tick, interval: tick * wheelSize, current: start - start%tick}
	for i := range l.buckets {
		l.buckets[i].init()
	}
	return l
}

func (b *wheelBucket) init() {
	b.head.next, b.head.prev = &b.head, &b.head
	b.expiration, b.index = -1, -1
}

func (b *wheelBucket) push(e *timerEntry) {
	e.bucket = b
	e.prev, e.next = b.head.prev, &b.head
	b.head.prev.next = e
	b.head.prev = e
}

func (b *wheelBucket) unlink(e *timerEntry) {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next, e.bucket = nil, nil, nil
}

func (w *timingWheel) add(e *timerEntry) {
	w.count++
	if !w.place(w.root, e) {
		w.due.push(e)
	}
}

// place puts e in the level whose span covers its deadline, or reports
// that it is already due (Kafka's TimingWheel.add).
func (w *timingWheel) place(l *wheelLevel, e *timerEntry) bool {
	for {
		switch {
		case e.deadline < l.current+l.tick:
			return false
		case e.deadline < l.current+l.interval:
			virtual := e.deadline / l.tick
			b := &l.buckets[virtual%wheelSize]
			b.push(e)
			w.schedule(b, virtual*l.tick)
			return true
		}
		if l.overflow == nil {
			l.overflow = newWheelLevel(l.interval, l.current)
		}
		l = l.overflow
	}
}

// schedule queues b at expiration unless it is queued there already.
func (w *timingWheel) schedule(b *wheelBucket, expiration int64) {
	if b.expiration == expiration {
		return
	}
	b.expiration = expiration
	if b.index >= 0 {
		heap.Fix(&w.queue, b.index)
		return
	}
	heap.Push(&w.queue, b)
}

func (w *timingWheel) remove(e *timerEntry) {
	if e.bucket == nil {
		return
	}
	e.bucket.unlink(e)
	w.count--
}

func (w *timingWheel) expire(now int64, out []*timerEntry) []*timerEntry {
	for len(w.queue) > 0 && w.queue[0].expiration <= now {
		b := heap.Pop(&w.queue).(*wheelBucket)
		w.root.advance(b.expiration)
		out = w.flush(b, out)
	}
	w.root.advance(now)
	for e := w.due.head.next; e != &w.due.head; e = w.due.head.next {
		w.due.unlink(e)
		w.count--
		out = append(out, e)
	}
	return out
}

// flush empties a bucket that came due: each entry moves to a finer
// level, or expires (Kafka's TimerTaskList.flush).
func (w *timingWheel) flush(b *wheelBucket, out []*timerEntry) []*timerEntry {
	b.expiration = -1
	for e := b.head.next; e != &b.head; e = b.head.next {
		b.unlink(e)
		if !w.place(w.root, e) {
			w.count--
			out = append(out, e)
		}
	}
	return out
}

// advance moves a level's clock (and its overflow's) to t, rounded
// down to the tick.
func (l *wheelLevel) advance(t int64) {
	for ; l != nil; l = l.overflow {
		if t < l.current+l.tick {
			return
		}
		l.current = t - t%l.tick
	}
}

func (w *timingWheel) next() (int64, bool) {
	if w.due.head.next != &w.due.head { // short-lived: emptied by the next expire
		first := int64(math.MaxInt64)
		for e := w.due.head.next; e != &w.due.head; e = e.next {
			first = min(first, e.deadline)
		}
		return first, true
	}
	if w.count == 0 {
		return 0, false
	}
	return w.queue[0].expiration, true // perhaps a bucket emptied by removals
}

func (w *timingWheel) len() int { return w.count }

// bucketHeap orders queued buckets by expiration (container/heap).
type bucketHeap []*wheelBucket

func (h bucketHeap) Len() int           { return len(h) }
func (h bucketHeap) Less(i, j int) bool { return h[i].expiration < h[j].expiration }
func (h bucketHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *bucketHeap) Push(x any) {
	b := x.(*wheelBucket)
	b.index = len(*h)
	*h = append(*h, b)
}
func (h *bucketHeap) Pop() any {
	old := *h
	b := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	b.index = -1
	return b
}
