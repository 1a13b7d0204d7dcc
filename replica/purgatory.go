package replica

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Operation is a request that waits in a Purgatory (Kafka's
// DelayedOperation): a delayed fetch waiting for bytes, a delayed produce
// waiting for the high watermark.
//
// The purgatory calls TryComplete and OnComplete under the operation's
// own lock, so they never run at the same time for one operation, and
// OnComplete runs exactly once.
type Operation interface {
	// TryComplete reports whether the operation can complete now. It
	// only checks: the purgatory completes the operation when it
	// returns true.
	TryComplete() bool
	// OnComplete finishes the operation: expired says whether its
	// timeout (or the purgatory's close) ended the wait rather than an
	// event that satisfied it.
	OnComplete(expired bool)
}

// PurgatoryConfig configures a Purgatory. The zero value is Kafka's
// defaults with a reaper goroutine on the wall clock.
type PurgatoryConfig struct {
	// PurgeInterval is how many operations may be watched since the
	// last purge, beyond those still waiting, before watch lists are
	// purged of completed operations (Kafka's
	// fetch.purgatory.purge.interval.requests and
	// producer.purgatory.purge.interval.requests, both 1000).
	PurgeInterval int
	// Clock is the time source (time.Now when nil).
	Clock func() time.Time
	// Manual starts no reaper: the caller expires operations with
	// Advance (tests drive time this way).
	Manual bool
	// btree selects the B-tree timer instead of the timing wheel (the
	// benchmarks and tests compare both).
	btree bool
}

// DefaultPurgeInterval is Kafka's purge interval.
const DefaultPurgeInterval = 1000

// Purgatory holds delayed operations until an event completes them or
// they expire (Kafka's DelayedOperationPurgatory). Operations are watched
// by key: each key is a WatchList (a Partition has one), and an event on
// a key (an append, a high-watermark advance, a deletion) tries the
// operations watching it. One timer holds every deadline; one reaper
// goroutine (or the caller, with Manual) expires them.
type Purgatory struct {
	cfg   PurgatoryConfig
	start time.Time

	mu struct {
		sync.Mutex
		timer      timer
		sleepUntil int64 // ms the reaper sleeps until
		closed     bool
	}
	kick chan struct{} // wakes the reaper for an earlier deadline
	stop chan struct{}
	done chan struct{} // closed when the reaper has returned

	lists struct {
		sync.Mutex
		m map[*WatchList]struct{} // lists that may hold operations
	}

	pending atomic.Int64 // operations watched and not completed
	watched atomic.Int64 // operations watched since the last purge, plus pending then
	expired atomic.Int64 // operations completed by their timeout
}

// NewPurgatory returns a purgatory, with its reaper running unless
// cfg.Manual.
func NewPurgatory(cfg PurgatoryConfig) *Purgatory {
	if cfg.PurgeInterval <= 0 {
		cfg.PurgeInterval = DefaultPurgeInterval
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	pg := &Purgatory{cfg: cfg, start: cfg.Clock(), kick: make(chan struct{}, 1),
		stop: make(chan struct{}), done: make(chan struct{})}
	pg.lists.m = map[*WatchList]struct{}{}
	if cfg.btree {
		pg.mu.timer = newBTreeTimer()
	} else {
		pg.mu.timer = newTimingWheel(0)
	}
	pg.mu.sleepUntil = math.MaxInt64
	if cfg.Manual {
		close(pg.done)
	} else {
		go pg.reap()
	}
	return pg
}

// delayed is an operation in the purgatory.
type delayed struct {
	mu    sync.Mutex // serialises TryComplete and OnComplete
	done  atomic.Bool
	op    Operation // nil once completed. REQUIRES: mu held
	pg    *Purgatory
	entry timerEntry
}

// Watch tries op once and, unless it completes, watches it on every key
// until an event completes it or timeout passes (Kafka's
// tryCompleteElseWatch). It reports whether op completed at once.
func (pg *Purgatory) Watch(op Operation, timeout time.Duration, keys ...*WatchList) bool {
	d := &delayed{op: op, pg: pg}
	d.entry.op = d
	pg.pending.Add(1)
	d.mu.Lock()
	if op.TryComplete() {
		d.forceComplete(false)
		d.mu.Unlock()
		return true
	}
	// An event between the try and the watch found no watcher: try
	// once more now that op is watched (Kafka's safeTryCompleteOrElse,
	// "last completion check"). An event from here on waits for the
	// lock and tries op itself.
	for _, k := range keys {
		k.add(d, pg)
	}
	pg.watched.Add(1)
	if op.TryComplete() {
		d.forceComplete(false)
		d.mu.Unlock()
		return true
	}
	d.mu.Unlock()
	pg.schedule(d, timeout)
	pg.maybePurge()
	return false
}

// schedule adds d's deadline to the timer.
func (pg *Purgatory) schedule(d *delayed, timeout time.Duration) {
	deadline := pg.deadline(timeout)
	pg.mu.Lock()
	if pg.mu.closed {
		pg.mu.Unlock()
		d.complete(true)
		return
	}
	if d.done.Load() { // completed by an event already
		pg.mu.Unlock()
		return
	}
	d.entry.deadline = deadline
	pg.mu.timer.add(&d.entry)
	kick := deadline < pg.mu.sleepUntil
	pg.mu.Unlock()
	if kick {
		select {
		case pg.kick <- struct{}{}:
		default:
		}
	}
}

// deadline is now plus timeout in ms since start, rounded up: an
// operation never expires before its timeout.
func (pg *Purgatory) deadline(timeout time.Duration) int64 {
	ns := pg.cfg.Clock().Sub(pg.start) + max(timeout, 0)
	return int64((ns + time.Millisecond - 1) / time.Millisecond)
}

func (pg *Purgatory) nowMs(now time.Time) int64 {
	return int64(now.Sub(pg.start) / time.Millisecond)
}

// complete takes d's lock and completes it.
func (d *delayed) complete(expired bool) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.forceComplete(expired)
}

// forceComplete completes d unless something did already (Kafka's
// forceComplete: a compare-and-swap makes it happen once).
// REQUIRES: d.mu held.
func (d *delayed) forceComplete(expired bool) bool {
	if !d.done.CompareAndSwap(false, true) {
		return false
	}
	pg := d.pg
	pg.mu.Lock()
	pg.mu.timer.remove(&d.entry)
	pg.mu.Unlock()
	pg.pending.Add(-1)
	if expired {
		pg.expired.Add(1)
	}
	op := d.op
	d.op = nil // a watch list may point here until purged: hold nothing
	op.OnComplete(expired)
	return true
}

// maybeTryComplete tries d after an event on a key it watches. One
// already completed is skipped before its lock: its completion may be
// the caller (a fetch completing reads its partitions, and a follower's
// read can advance the high watermark, an event that tries the
// operations watching the partition, this one among them).
func (d *delayed) maybeTryComplete() bool {
	if d.done.Load() {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done.Load() || !d.op.TryComplete() {
		return false
	}
	return d.forceComplete(false)
}

// Advance expires every operation whose deadline is at or before now
// and returns how many it completed. The reaper calls it; with Manual,
// the caller does.
func (pg *Purgatory) Advance(now time.Time) int {
	n, _ := pg.expireDue(pg.nowMs(now), nil)
	pg.maybePurge()
	return n
}

// expireDue completes the operations due at ms, using buf for them.
func (pg *Purgatory) expireDue(ms int64, buf []*timerEntry) (int, []*timerEntry) {
	pg.mu.Lock()
	buf = pg.mu.timer.expire(ms, buf[:0])
	pg.mu.Unlock()
	n := 0
	for i, e := range buf {
		if e.op.complete(true) {
			n++
		}
		buf[i] = nil
	}
	return n, buf[:0]
}

// reap is the purgatory's one goroutine (Kafka's ExpiredOperationReaper):
// it sleeps until the timer's next deadline, or an earlier one added,
// and expires what is due. It returns at Close.
func (pg *Purgatory) reap() {
	defer close(pg.done)
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	var buf []*timerEntry
	for {
		now := pg.nowMs(pg.cfg.Clock())
		_, buf = pg.expireDue(now, buf)
		pg.maybePurge()
		pg.mu.Lock()
		next, ok := pg.mu.timer.next()
		if !ok {
			next = now + time.Hour.Milliseconds()
		}
		pg.mu.sleepUntil = next
		pg.mu.Unlock()
		t.Reset(time.Duration(max(next-now, 0)) * time.Millisecond)
		select {
		case <-t.C:
		case <-pg.kick:
		case <-pg.stop:
			return
		}
	}
}

// Close stops the reaper and completes every waiting operation as
// expired, so that each request still gets its answer at shutdown. An
// operation watched after Close completes at once, as expired.
func (pg *Purgatory) Close() {
	pg.mu.Lock()
	if pg.mu.closed {
		pg.mu.Unlock()
		return
	}
	pg.mu.closed = true
	left := pg.mu.timer.expire(math.MaxInt64, nil)
	pg.mu.Unlock()
	close(pg.stop)
	<-pg.done
	for _, e := range left {
		e.op.complete(true)
	}
}

// Pending is the number of operations waiting.
func (pg *Purgatory) Pending() int { return int(pg.pending.Load()) }

// Expired is the number of operations completed by their timeout.
func (pg *Purgatory) Expired() int64 { return pg.expired.Load() }

// maybePurge purges completed operations from the watch lists once more
// than PurgeInterval have been watched beyond those still pending
// (Kafka's purge in tryCompleteElseWatch and the reaper).
func (pg *Purgatory) maybePurge() {
	pending := pg.pending.Load()
	if pg.watched.Load()-pending <= int64(pg.cfg.PurgeInterval) {
		return
	}
	pg.watched.Store(pending)
	pg.lists.Lock()
	defer pg.lists.Unlock()
	for w := range pg.lists.m {
		if w.purge() == 0 {
			delete(pg.lists.m, w)
		}
	}
}

// watchedEntries is the number of entries in all watch lists, completed
// or not (for tests of the purge).
func (pg *Purgatory) watchedEntries() int {
	pg.lists.Lock()
	defer pg.lists.Unlock()
	n := 0
	for w := range pg.lists.m {
		w.mu.Lock()
		n += len(w.mu.ops)
		w.mu.Unlock()
	}
	return n
}
