package net

import (
	"sync"
	"sync/atomic"
)

// memoryPool is Kafka's SimpleMemoryPool for requests: the bytes of every
// request being read or served are granted from one budget of
// queued.max.request.bytes. A connection asks for its request's size once
// the 4-byte size prefix is read and before the body buffer exists; the
// bytes come back when the response has been written (or abandoned), or
// when the connection closes mid-request.
//
// Unlike Kafka's pool (non-strict: it grants whenever any byte is free, so
// up to capacity + socket.request.max.bytes can be out) this one is strict:
// the bytes granted never exceed capacity. Requests that do not fit wait in
// arrival order (first in, first out, as golang.org/x/sync's weighted
// semaphore), so a large request is not starved by a stream of small ones;
// capacity is at least socket.request.max.bytes, so every legal request
// fits once the pool is idle.
//
// A memoryPool is safe for concurrent use.
type memoryPool struct {
	capacity int64

	mu struct {
		sync.Mutex
		used    int64
		waiters []*memWaiter // FIFO, oldest first
	}

	used   atomic.Int64 // copy of mu.used for Stats
	waits  atomic.Int64 // requests that had to wait for memory
	queued atomic.Int64 // requests waiting now
}

// memWaiter is a request for memory the pool could not grant at once. The
// pool grants it (granted becomes true, under the pool's mutex) when enough
// is released, then closes ready and calls notify outside the mutex.
type memWaiter struct {
	size    int64
	granted atomic.Bool
	ready   chan struct{}
	notify  func() // may be nil
}

func newMemoryPool(capacity int64) *memoryPool {
	return &memoryPool{capacity: capacity}
}

// tryAcquire grants n bytes at once, or returns a waiter that notify will
// report granted. Nothing is granted ahead of an earlier waiter.
// REQUIRES: 0 < n <= p.capacity.
func (p *memoryPool) tryAcquire(n int64, notify func()) *memWaiter {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.mu.waiters) == 0 && p.mu.used+n <= p.capacity {
		p.setUsed(p.mu.used + n)
		return nil
	}
	w := &memWaiter{size: n, ready: make(chan struct{}), notify: notify}
	p.mu.waiters = append(p.mu.waiters, w)
	p.waits.Add(1)
	p.queued.Add(1)
	return w
}

// acquire grants n bytes, blocking until they are free. It returns false,
// having granted nothing, if stop is closed first.
func (p *memoryPool) acquire(n int64, stop <-chan struct{}) bool {
	w := p.tryAcquire(n, nil)
	if w == nil {
		return true
	}
	select {
	case <-w.ready:
		return true
	case <-stop:
		p.cancel(w)
		return false
	}
}

// short reports whether fewer than n bytes are free or requests are waiting.
func (p *memoryPool) short(n int64) bool {
	return p.capacity-p.used.Load() < n || p.queued.Load() > 0
}

// release returns n bytes granted earlier and grants waiters that now fit.
func (p *memoryPool) release(n int64) {
	if n <= 0 {
		return
	}
	p.mu.Lock()
	p.setUsed(p.mu.used - n)
	granted := p.grantWaiters()
	p.mu.Unlock()
	wakeGranted(granted)
}

// cancel withdraws w: its bytes go back if it was granted meanwhile.
func (p *memoryPool) cancel(w *memWaiter) {
	p.mu.Lock()
	if w.granted.Load() {
		p.setUsed(p.mu.used - w.size)
	} else {
		for i, x := range p.mu.waiters {
			if x == w {
				p.mu.waiters = append(p.mu.waiters[:i], p.mu.waiters[i+1:]...)
				p.queued.Add(-1)
				break
			}
		}
	}
	granted := p.grantWaiters()
	p.mu.Unlock()
	wakeGranted(granted)
}

// grantWaiters grants the oldest waiters while they fit and returns them.
// REQUIRES: p.mu held.
func (p *memoryPool) grantWaiters() []*memWaiter {
	var granted []*memWaiter
	for len(p.mu.waiters) > 0 {
		w := p.mu.waiters[0]
		if p.mu.used+w.size > p.capacity {
			break
		}
		p.setUsed(p.mu.used + w.size)
		w.granted.Store(true)
		p.mu.waiters[0] = nil
		p.mu.waiters = p.mu.waiters[1:]
		p.queued.Add(-1)
		granted = append(granted, w)
	}
	if len(p.mu.waiters) == 0 {
		p.mu.waiters = nil // let the backing array go
	}
	return granted
}

// setUsed records the bytes granted.
// REQUIRES: p.mu held.
func (p *memoryPool) setUsed(n int64) {
	p.mu.used = n
	p.used.Store(n)
}

// wakeGranted tells granted waiters, outside the pool's mutex.
func wakeGranted(ws []*memWaiter) {
	for _, w := range ws {
		close(w.ready)
		if w.notify != nil {
			w.notify()
		}
	}
}
