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

	mu     sync.Mutex
	wakers map[int]func() // processors' wake functions, by processor id

	wg sync.WaitGroup
}

func newRequestChannel(capacity int, stats *counters) *requestChannel {
	return &requestChannel{
		ch:     make(chan *call, capacity),
		stats:  stats,
		wakers: map[int]func(){},
	}
}

// start runs n handler goroutines serving h until close.
func (rc *requestChannel) start(n int, h Handler) {
	for range n {
		rc.wg.Add(1)
		go rc.handlerLoop(h)
	}
}

// handlerLoop is one of Kafka's KafkaRequestHandler threads.
func (rc *requestChannel) handlerLoop(h Handler) {
	defer rc.wg.Done()
	for c := range rc.ch {
		rc.stats.queueSize.Add(-1)
		if rc.stalled.Load() > 0 {
			rc.wakeStalled()
		}
		if c.owner.abandoned() {
			c.releaseMem() // never served: no response will end it
			continue
		}
		h.Serve(&c.req, c.respond)
	}
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
	close(rc.ch)
}

// wait blocks until every handler goroutine has returned.
func (rc *requestChannel) wait() {
	rc.wg.Wait()
}
