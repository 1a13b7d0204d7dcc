package net

import (
	"context"
	"errors"
	"fmt"
	stdnet "net"
	"sync"
	"sync/atomic"
	"syscall"
)

// Server is what both designs offer: the Reactor and the goroutine-per-
// connection server serve the same Handler with the same framing, limits
// and ordering.
type Server interface {
	// Serve accepts connections on ln until Shutdown (then it returns
	// ErrServerClosed) or until ln fails.
	Serve(ln stdnet.Listener) error
	// Shutdown stops accepting, lets requests in flight finish and their
	// responses be written, then closes every connection. When ctx ends
	// first, connections are closed at once and ctx's error is returned.
	Shutdown(ctx context.Context) error
	// Stats snapshots the counters.
	Stats() Stats
}

// Reactor is Kafka's SocketServer: per listener one acceptor and
// num.network.threads processors (each an epoll loop owning its
// connections), one request channel bounded by queued.max.requests, and
// num.io.threads handler goroutines.
type Reactor struct {
	cfg        Config
	h          Handler
	stats      counters
	reqs       *requestChannel
	pool       *memoryPool  // queued.max.request.bytes; nil only in benchmarks measuring its cost
	quotas     *connQuotas  // max.connections.per.ip
	connRate   *tokenBucket // max.connection.creation.rate; nil: unlimited
	nextConnID atomic.Uint64
	draining   atomic.Bool // Shutdown began: processors stop reading
	force      atomic.Bool // Shutdown's context ended: processors close everything
	procWG     sync.WaitGroup

	mu struct {
		sync.Mutex
		closed    bool
		started   bool // handler goroutines running
		acceptors []*acceptor
		procs     []*processor // serving processors, every listener's
		retired   []*processor // removed by SetNetworkThreads, draining or exited
		nextProc  int          // id of the next processor
		// netThreads is num.network.threads set by SetNetworkThreads (0:
		// the configured one); new listeners get that many processors.
		netThreads int
		fatal      error // first processor failure
	}
}

var _ Server = (*Reactor)(nil)

// NewReactor returns a Reactor serving h. Nothing runs until Serve.
func NewReactor(cfg Config, h Handler) (*Reactor, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if h == nil {
		return nil, errors.New("net: NewReactor: nil handler")
	}
	quotas, err := newConnQuotas(cfg)
	if err != nil {
		return nil, err
	}
	r := &Reactor{cfg: cfg, h: h, quotas: quotas, connRate: newTokenBucket(cfg.MaxConnectionCreationRate)}
	r.pool = newMemoryPool(cfg.QueuedMaxRequestBytes)
	r.reqs = newRequestChannel(cfg.QueuedMaxRequests, cfg.NumIOThreads, &r.stats)
	return r, nil
}

// ListenAndServe listens on the TCP address addr and serves it.
func (r *Reactor) ListenAndServe(addr string) error {
	ln, err := stdnet.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("net: listen %s: %w", addr, err)
	}
	return r.Serve(ln)
}

// Serve runs an acceptor and num.network.threads processors for ln. The
// listener must expose its descriptor (syscall.Conn), as *net.TCPListener
// and *net.UnixListener do. Serve closes ln when it returns.
func (r *Reactor) Serve(ln stdnet.Listener) error {
	a, err := r.newAcceptor(ln)
	if err != nil {
		ln.Close()
		return err
	}
	return a.run()
}

// newDecoder returns a connection's frame decoder: gated by the memory
// pool when there is one.
func (r *Reactor) newDecoder() frameDecoder {
	if r.pool == nil {
		return newFrameDecoder(r.cfg.SocketRequestMaxBytes)
	}
	return newGatedDecoder(r.cfg.SocketRequestMaxBytes)
}

// newAcceptor builds and registers the acceptor and processors for ln and
// starts the processors.
func (r *Reactor) newAcceptor(ln stdnet.Listener) (*acceptor, error) {
	sc, ok := ln.(syscall.Conn)
	if !ok {
		return nil, fmt.Errorf("net: Serve %s: listener %T does not expose its descriptor", ln.Addr(), ln)
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("net: Serve %s: %w", ln.Addr(), err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mu.closed {
		return nil, ErrServerClosed
	}
	procs, err := r.newProcessors()
	if err != nil {
		return nil, fmt.Errorf("net: Serve %s: %w", ln.Addr(), err)
	}
	if !r.mu.started {
		r.mu.started = true
		r.reqs.start(r.h)
	}
	a, err := newAcceptor(r, ln, raw, procs)
	if err != nil {
		for _, p := range procs {
			p.exit()
		}
		return nil, err
	}
	r.mu.acceptors = append(r.mu.acceptors, a)
	r.mu.procs = append(r.mu.procs, procs...)
	r.runProcessors(procs)
	return a, nil
}

// runProcessors starts procs' loops. REQUIRES: r.mu held.
func (r *Reactor) runProcessors(procs []*processor) {
	for _, p := range procs {
		r.procWG.Add(1)
		go func() {
			defer r.procWG.Done()
			p.run()
		}()
	}
}

// newProcessors creates num.network.threads processors.
// REQUIRES: r.mu held.
func (r *Reactor) newProcessors() ([]*processor, error) {
	return r.addProcessors(r.networkThreadsLocked())
}

// addProcessors creates n processors, registered for stall wake-ups but
// not running. REQUIRES: r.mu held.
func (r *Reactor) addProcessors(n int) ([]*processor, error) {
	var procs []*processor
	for range n {
		p, err := newProcessor(r.mu.nextProc, r)
		if err != nil {
			for _, q := range procs {
				q.exit()
			}
			return nil, err
		}
		r.mu.nextProc++
		r.reqs.register(p.id, p.notify)
		procs = append(procs, p)
	}
	return procs, nil
}

// fail records a processor's fatal error; Shutdown reports it.
func (r *Reactor) fail(err error) {
	r.mu.Lock()
	if r.mu.fatal == nil {
		r.mu.fatal = err
	}
	r.mu.Unlock()
}

// Shutdown stops the acceptors, drains the processors (requests in flight
// are answered, then connections close), stops the handlers, and returns.
// If ctx ends first, everything is closed at once and ctx.Err() returned;
// handler goroutines still inside Serve then exit when Serve returns.
func (r *Reactor) Shutdown(ctx context.Context) error {
	r.mu.Lock()
	if r.mu.closed {
		r.mu.Unlock()
		return nil
	}
	r.mu.closed = true
	acceptors, started := r.mu.acceptors, r.mu.started
	procs := append(append([]*processor(nil), r.mu.procs...), r.mu.retired...)
	r.mu.Unlock()

	for _, a := range acceptors {
		a.stop()
	}
	r.draining.Store(true)
	for _, p := range procs {
		p.notify()
	}
	err := r.waitProcessors(ctx, procs)
	if started {
		r.reqs.close()
		if werr := waitCtx(ctx, r.reqs.wait); err == nil {
			err = werr
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil && r.mu.fatal != nil {
		err = r.mu.fatal
	}
	return err
}

// waitProcessors waits for the processors to drain; when ctx ends first it
// forces them to close and waits for that (which is prompt).
func (r *Reactor) waitProcessors(ctx context.Context, procs []*processor) error {
	err := waitCtx(ctx, r.procWG.Wait)
	if err != nil {
		r.force.Store(true)
		for _, p := range procs {
			p.notify()
		}
		r.procWG.Wait()
	}
	return err
}

// waitCtx runs wait in a goroutine and returns when it returns or ctx ends.
func waitCtx(ctx context.Context, wait func()) error {
	done := make(chan struct{})
	go func() {
		wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Stats snapshots the counters and the processors.
func (r *Reactor) Stats() Stats {
	s := r.stats.snapshot()
	s.addPool(r.pool)
	r.mu.Lock()
	procs := r.mu.procs
	r.mu.Unlock()
	for _, p := range procs {
		s.Processors = append(s.Processors, p.stats())
	}
	s.IOThreads = int64(r.reqs.size())
	s.IOThreadsRunning = int64(r.reqs.running.Load())
	s.NetworkThreads = int64(r.networkThreads())
	return s
}

// SetConnectionLimits changes max.connections and max.connections.per.ip
// (Kafka's values: Int.MaxValue is unlimited, per IP 0 admits only the
// overrides) for the connections accepted from now on.
func (r *Reactor) SetConnectionLimits(maxConns, perIP int) {
	r.quotas.setLimits(normalLimits(maxConns, perIP))
}
