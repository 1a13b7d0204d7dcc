package net

import (
	"sync"
	"sync/atomic"
)

// call is one request travelling from a connection to a handler and back.
// The connection side that created it implements deliver.
type call struct {
	req      Request
	answered atomic.Bool
	owner    callOwner
	stats    *counters
	pool     *memoryPool
	mem      atomic.Int64 // bytes of pool held by the request until it is done
}

// releaseMem returns the request's bytes to the memory pool. Every path
// that ends a request calls it (response written, skipped or abandoned);
// the swap makes the return happen exactly once.
func (c *call) releaseMem() {
	if n := c.mem.Swap(0); n > 0 {
		c.pool.release(n)
	}
}

// callOwner receives the response of a call: a Reactor processor or a
// goroutine-server connection.
type callOwner interface {
	deliver(c *call, r Response)
	abandoned() bool // the connection side is gone: skip serving
}

// respond is what handlers call; only the first call counts.
func (c *call) respond(r Response) {
	if !c.answered.CompareAndSwap(false, true) {
		c.stats.duplicateResponds.Add(1)
		return
	}
	c.owner.deliver(c, r)
}

// requestChannel is Kafka's RequestChannel: one queue bounded by
// queued.max.requests shared by every connection, drained by num.io.threads
// handler goroutines.
//
// Reactor processors never block on it: tryPut fails when it is full, the
// processor stops reading and registers in stalled, and the handler that next
// takes a request wakes the stalled processors (see takeWakes).
type requestChannel struct {
	ch      chan *call
	stats   *counters
	stalled atomic.Int32 // processors waiting for room
	// retire holds one token per handler goroutine that must exit (a
	// shrink of num.io.threads); a handler takes a token only between
	// requests, so none is cut short.
	retire chan struct{}

	mu      sync.Mutex
	wakers  map[int]func() // processors' wake functions, by processor id
	h       Handler        // REQUIRES mu; set by start
	threads int            // REQUIRES mu; num.io.threads in force
	started bool           // REQUIRES mu
	closed  bool           // REQUIRES mu; close ran: no goroutine may start

	running atomic.Int32 // handler goroutines alive now
	wg      sync.WaitGroup
}

// maxIOThreads bounds num.io.threads so the retire channel has room for
// every token a shrink can post.
const maxIOThreads = 1 << 16

func newRequestChannel(capacity, threads int, stats *counters) *requestChannel {
	return &requestChannel{
		threads: min(max(threads, 1), maxIOThreads),
		ch:      make(chan *call, capacity),
		stats:   stats,
		retire:  make(chan struct{}, maxIOThreads),
		wakers:  map[int]func(){},
	}
}

// start runs num.io.threads handler goroutines serving h until close.
func (rc *requestChannel) start(h Handler) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.started || rc.closed {
		return
	}
	rc.started, rc.h = true, h
	rc.spawn(rc.threads)
}

// spawn starts n handler goroutines. REQUIRES rc.mu, started, not closed.
func (rc *requestChannel) spawn(n int) {
	for range n {
		rc.wg.Add(1)
		rc.running.Add(1)
		go rc.handlerLoop(rc.h)
	}
}

// resize sets num.io.threads to n (at least 1), as Kafka's
// KafkaRequestHandlerPool.resizeThreadPool: growing starts handlers at
// once; shrinking makes handlers exit, each after the request it is
// serving. After close it does nothing.
func (rc *requestChannel) resize(n int) {
	n = min(max(n, 1), maxIOThreads)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.closed {
		return
	}
	old := rc.threads
	rc.threads = n
	if !rc.started {
		return
	}
	for ; old < n; old++ {
		select {
		case <-rc.retire: // cancel a pending exit instead of starting one
		default:
			rc.spawn(1)
		}
	}
	for ; old > n; old-- {
		rc.retire <- struct{}{} // never blocks: at most maxIOThreads pending
	}
}

// size is num.io.threads in force (what resize last set, or start's).
func (rc *requestChannel) size() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.threads
}

// handlerLoop is one of Kafka's KafkaRequestHandler threads. Between
// requests it takes a retire token if one is posted and exits.
func (rc *requestChannel) handlerLoop(h Handler) {
	defer rc.wg.Done()
	defer rc.running.Add(-1)
	for {
		select {
		case <-rc.retire:
			return
		default:
		}
		var c *call
		var ok bool
		select {
		case c, ok = <-rc.ch:
		case <-rc.retire:
			return
		}
		if !ok {
			return
		}
		rc.serve(h, c)
	}
}

// serve answers one call taken from the channel.
func (rc *requestChannel) serve(h Handler, c *call) {
	rc.stats.queueSize.Add(-1)
	if rc.stalled.Load() > 0 {
		rc.wakeStalled()
	}
	if c.owner.abandoned() {
		c.releaseMem() // never served: no response will end it
		return
	}
	h.Serve(&c.req, c.respond)
}

// tryPut enqueues c unless the channel is full.
func (rc *requestChannel) tryPut(c *call) bool {
	rc.stats.queueSize.Add(1)
	select {
	case rc.ch <- c:
		return true
	default:
		rc.stats.queueSize.Add(-1)
		return false
	}
}

// put enqueues c, blocking while the channel is full, unless stop closes
// first (it then returns false).
func (rc *requestChannel) put(c *call, stop <-chan struct{}) bool {
	if rc.tryPut(c) {
		return true
	}
	rc.stats.queueFullStalls.Add(1)
	select {
	case rc.ch <- c:
		// Counted after the fact: a handler may already have taken it, so
		// the gauge can read one low for an instant, never high.
		rc.stats.queueSize.Add(1)
		return true
	case <-stop:
		return false
	}
}

// register records a processor's wake function for stall wake-ups.
func (rc *requestChannel) register(id int, wake func()) {
	rc.mu.Lock()
	rc.wakers[id] = wake
	rc.mu.Unlock()
}

// unregister forgets a processor.
func (rc *requestChannel) unregister(id int) {
	rc.mu.Lock()
	delete(rc.wakers, id)
	rc.mu.Unlock()
}

// wakeStalled wakes every registered processor; stalled ones retry their put.
// Stalls are rare (the queue is full), so waking all is cheaper than tracking
// which ones wait.
func (rc *requestChannel) wakeStalled() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, w := range rc.wakers {
		w()
	}
}

// close stops the handler goroutines once the queue is drained. No put may
// follow.
func (rc *requestChannel) close() {
	rc.mu.Lock()
	rc.closed = true
	rc.mu.Unlock()
	close(rc.ch)
}

// wait blocks until every handler goroutine has returned.
func (rc *requestChannel) wait() {
	rc.wg.Wait()
}
