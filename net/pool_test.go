package net

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// Kafka: SimpleMemoryPool hands out at most its size; Varve's pool is
// strict (never over capacity) and grants waiters in arrival order, so a
// large request is not overtaken by small ones.
func TestMemoryPoolStrictFIFO(t *testing.T) {
	p := newMemoryPool(100)
	if w := p.tryAcquire(60, nil); w != nil {
		t.Fatal("60 of 100 refused")
	}
	big := p.tryAcquire(50, nil) // does not fit: waits
	if big == nil {
		t.Fatal("50 granted with 40 free")
	}
	small := p.tryAcquire(10, nil) // fits, but must not pass the waiter
	if small == nil {
		t.Fatal("10 granted ahead of an earlier waiter")
	}
	if got := p.used.Load(); got != 60 {
		t.Fatalf("used %d, want 60", got)
	}
	p.release(60)
	for _, w := range []*memWaiter{big, small} {
		select {
		case <-w.ready:
		default:
			t.Fatalf("waiter of %d not granted after release", w.size)
		}
	}
	if got := p.used.Load(); got != 60 || p.queued.Load() != 0 || p.waits.Load() != 2 {
		t.Fatalf("used %d queued %d waits %d, want 60 0 2", got, p.queued.Load(), p.waits.Load())
	}
}

// A waiter that gives up returns nothing it was not given, and what it was
// given (granted between its last look and its cancel) goes back.
func TestMemoryPoolCancel(t *testing.T) {
	p := newMemoryPool(100)
	p.tryAcquire(100, nil)
	w := p.tryAcquire(30, nil)
	p.cancel(w) // never granted
	if p.used.Load() != 100 || p.queued.Load() != 0 {
		t.Fatalf("after cancel of an ungranted waiter: used %d queued %d", p.used.Load(), p.queued.Load())
	}
	w = p.tryAcquire(30, nil)
	p.release(100) // grants w
	if !w.granted.Load() || p.used.Load() != 30 {
		t.Fatalf("granted %v used %d", w.granted.Load(), p.used.Load())
	}
	p.cancel(w) // granted: its bytes come back
	if p.used.Load() != 0 {
		t.Fatalf("after cancel of a granted waiter: used %d", p.used.Load())
	}
	stop := make(chan struct{})
	p.tryAcquire(100, nil)
	close(stop)
	if p.acquire(1, stop) {
		t.Fatal("acquire succeeded on a full pool after stop")
	}
	if p.used.Load() != 100 || p.queued.Load() != 0 {
		t.Fatalf("after a stopped acquire: used %d queued %d", p.used.Load(), p.queued.Load())
	}
}

// Property: under concurrent acquire and release the pool never grants
// more than its capacity, and everything returns to zero.
func TestMemoryPoolConcurrent(t *testing.T) {
	const capacity = 1000
	p := newMemoryPool(capacity)
	var wg sync.WaitGroup
	var mu sync.Mutex
	over := int64(0)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for range 2000 {
				n := 1 + rng.Int64N(capacity)
				if !p.acquire(n, nil) {
					t.Error("acquire without stop failed")
					return
				}
				if u := p.used.Load(); u > capacity {
					mu.Lock()
					over = max(over, u)
					mu.Unlock()
				}
				p.release(n)
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("acquirers stuck")
	}
	if over > 0 || p.used.Load() != 0 || p.queued.Load() != 0 {
		t.Fatalf("max used %d (capacity %d), final used %d queued %d", over, capacity, p.used.Load(), p.queued.Load())
	}
}

// Kafka: queued.max.request.bytes -1 is unbounded in Kafka; Varve derives
// a bound, at least socket.request.max.bytes, from the memory limit.
func TestDefaultQueuedMaxRequestBytes(t *testing.T) {
	if got := DefaultQueuedMaxRequestBytes(DefaultSocketRequestMaxBytes); got < DefaultSocketRequestMaxBytes {
		t.Errorf("default %d below socket.request.max.bytes", got)
	}
	old := setMemoryLimit(t, 1<<30)
	if got := DefaultQueuedMaxRequestBytes(1 << 20); got != 1<<29 {
		t.Errorf("with GOMEMLIMIT 1 GiB: %d, want half (%d)", got, 1<<29)
	}
	if got := DefaultQueuedMaxRequestBytes(1 << 30); got != 1<<30 {
		t.Errorf("floor: %d, want socket.request.max.bytes %d", got, 1<<30)
	}
	setMemoryLimit(t, old)
	if got := DefaultConfig().QueuedMaxRequestBytes; got <= 0 {
		t.Errorf("DefaultConfig: queued.max.request.bytes %d", got)
	}
	cfg := Config{SocketRequestMaxBytes: 1 << 20, QueuedMaxRequestBytes: 1 << 19}.withDefaults()
	if err := cfg.validate(); err == nil {
		t.Error("queued.max.request.bytes below socket.request.max.bytes accepted")
	}
}
