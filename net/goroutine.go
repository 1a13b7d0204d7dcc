package net

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	stdnet "net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// GoroutineServer is the design the Reactor is compared with: one goroutine
// per connection, blocking reads and writes through the Go runtime's poller.
// It shares with the Reactor the framing (FrameReader), the limits, the
// request channel and handler goroutines, and the ordering: one request in
// flight per connection. A connection's goroutine blocks while the request
// channel is full, so backpressure stops each connection separately rather
// than a whole processor.
type GoroutineServer struct {
	cfg        Config
	h          Handler
	stats      counters
	reqs       *requestChannel
	pool       *memoryPool  // queued.max.request.bytes; nil only in benchmarks measuring its cost
	quotas     *connQuotas  // max.connections.per.ip
	connRate   *tokenBucket // max.connection.creation.rate; nil: unlimited
	nextConnID atomic.Uint64
	closingCh  chan struct{} // closed when Shutdown begins
	forceCh    chan struct{} // closed when Shutdown's context ends
	connWG     sync.WaitGroup

	mu struct {
		sync.Mutex
		closed    bool
		started   bool
		listeners map[stdnet.Listener]struct{}
		conns     map[*gconn]struct{}
	}
}

var _ Server = (*GoroutineServer)(nil)

// NewGoroutineServer returns a goroutine-per-connection server serving h.
func NewGoroutineServer(cfg Config, h Handler) (*GoroutineServer, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if h == nil {
		return nil, errors.New("net: NewGoroutineServer: nil handler")
	}
	quotas, err := newConnQuotas(cfg)
	if err != nil {
		return nil, err
	}
	s := &GoroutineServer{
		cfg: cfg, h: h, quotas: quotas, connRate: newTokenBucket(cfg.MaxConnectionCreationRate),
		pool: newMemoryPool(cfg.QueuedMaxRequestBytes), closingCh: make(chan struct{}), forceCh: make(chan struct{}),
	}
	s.reqs = newRequestChannel(cfg.QueuedMaxRequests, cfg.NumIOThreads, &s.stats)
	s.mu.listeners = map[stdnet.Listener]struct{}{}
	s.mu.conns = map[*gconn]struct{}{}
	return s, nil
}

// ListenAndServe listens on the TCP address addr and serves it.
func (s *GoroutineServer) ListenAndServe(addr string) error {
	ln, err := stdnet.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("net: listen %s: %w", addr, err)
	}
	return s.Serve(ln)
}

// Serve accepts connections on ln, one goroutine each, until Shutdown or
// a listener failure. Serve closes ln when it returns.
func (s *GoroutineServer) Serve(ln stdnet.Listener) error {
	defer ln.Close()
	if !s.track(ln) {
		return ErrServerClosed
	}
	name := ln.Addr().String()
	rate := newTokenBucket(s.cfg.ListenerMaxConnectionCreationRate[name])
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.closing() {
				return ErrServerClosed
			}
			if retryableAccept(err) {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				time.Sleep(backoff)
				continue
			}
			return fmt.Errorf("net: accept on %s: %w", name, err)
		}
		backoff = 0
		if !countThrottle(&s.stats, rate, s.connRate, s.closingCh) {
			nc.Close()
			return ErrServerClosed
		}
		s.startConn(nc, name)
	}
}

// retryableAccept reports accept errors that may clear up: out of
// descriptors or buffers, or a connection aborted before it was accepted.
func retryableAccept(err error) bool {
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED} {
		if errors.Is(err, e) {
			return true
		}
	}
	ne, ok := err.(stdnet.Error)
	return ok && ne.Timeout()
}

// track registers ln and starts the handler goroutines on first use.
func (s *GoroutineServer) track(ln stdnet.Listener) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closed {
		return false
	}
	s.mu.listeners[ln] = struct{}{}
	if !s.mu.started {
		s.mu.started = true
		s.reqs.start(s.h)
	}
	return true
}

func (s *GoroutineServer) closing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.closed
}

// startConn applies the socket settings and starts the connection's goroutine.
// Like the Reactor's acceptor it has waited for the creation rates; the
// per-IP and broker-wide limits close the connection at once.
func (s *GoroutineServer) startConn(nc stdnet.Conn, listener string) {
	s.stats.accepted.Add(1)
	ip := remoteIP(nc)
	if !s.quotas.inc(ip) {
		rejectPerIP(&s.stats, s.cfg.Logger, listener, ip)
		nc.Close()
		return
	}
	if s.quotas.overMax(s.stats.connections.Load()) {
		s.stats.rejected.Add(1)
		s.quotas.dec(ip)
		nc.Close()
		return
	}
	if tc, ok := tcpConn(nc); ok {
		tc.SetNoDelay(true)
		if s.cfg.SocketSendBufferBytes > 0 {
			tc.SetWriteBuffer(s.cfg.SocketSendBufferBytes)
		}
		if s.cfg.SocketReceiveBufferBytes > 0 {
			tc.SetReadBuffer(s.cfg.SocketReceiveBufferBytes)
		}
	}
	id := s.nextConnID.Add(1)
	gc := &gconn{srv: s, nc: nc, ip: ip, resp: make(chan delivery, 1),
		info: ConnInfo{ID: id, Listener: listener, Remote: nc.RemoteAddr(), State: new(ConnState)}}
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		s.quotas.dec(ip)
		nc.Close()
		return
	}
	s.mu.conns[gc] = struct{}{}
	s.connWG.Add(1)
	s.mu.Unlock()
	s.stats.connections.Add(1)
	go gc.serve()
}

// ServeTLS is Serve with every connection wrapped in TLS (crypto/tls) as
// configured by cfg. The handshake runs on the connection's goroutine
// when its first request is read, bounded like any read by
// connections.max.idle.ms; a client that does not speak TLS fails it and
// is closed without a byte of Kafka. Responses go through the TLS
// connection: a file region is read and copied (pagecache.Region.WriteTo
// falls back from sendfile, since the kernel does not encrypt), as Kafka
// loses zero-copy under SSL. ConnInfo.TLS holds the handshake's result.
func (s *GoroutineServer) ServeTLS(ln stdnet.Listener, cfg *tls.Config) error {
	if cfg == nil {
		ln.Close()
		return errors.New("net: ServeTLS: nil tls.Config")
	}
	return s.Serve(tls.NewListener(ln, cfg))
}

// tcpConn finds the TCP connection under nc (itself, or under TLS).
func tcpConn(nc stdnet.Conn) (*stdnet.TCPConn, bool) {
	if t, ok := nc.(*tls.Conn); ok {
		nc = t.NetConn()
	}
	tc, ok := nc.(*stdnet.TCPConn)
	return tc, ok
}

// Shutdown closes the listeners, wakes idle connections so they close, lets
// connections with a request in flight write their response first, then
// stops the handlers. If ctx ends first every connection is closed at once.
func (s *GoroutineServer) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		return nil
	}
	s.mu.closed = true
	close(s.closingCh)
	for ln := range s.mu.listeners {
		ln.Close()
	}
	conns := make([]*gconn, 0, len(s.mu.conns))
	for gc := range s.mu.conns {
		conns = append(conns, gc)
	}
	started := s.mu.started
	s.mu.Unlock()

	for _, gc := range conns {
		gc.interruptIfIdle()
	}
	err := waitCtx(ctx, s.connWG.Wait)
	if err != nil {
		close(s.forceCh)
		for _, gc := range conns {
			gc.nc.Close()
		}
		s.connWG.Wait()
	}
	if started {
		s.reqs.close()
		if werr := waitCtx(ctx, s.reqs.wait); err == nil {
			err = werr
		}
	}
	return err
}

// Stats snapshots the counters. A goroutine server has no processors.
func (s *GoroutineServer) Stats() Stats {
	st := s.stats.snapshot()
	st.addPool(s.pool)
	st.IOThreads = int64(s.reqs.size())
	st.IOThreadsRunning = int64(s.reqs.running.Load())
	return st
}

// SetIOThreads changes num.io.threads on the running server (Kafka's
// DynamicThreadPool): handlers start at once, or the extra ones exit
// after the request they serve. n below 1 counts as 1.
func (s *GoroutineServer) SetIOThreads(n int) { s.reqs.resize(n) }

// SetNetworkThreads accepts num.network.threads and does nothing: the
// goroutine-per-connection design has no processors to resize.
func (s *GoroutineServer) SetNetworkThreads(int) error { return nil }

// forced reports whether Shutdown gave up waiting.
func (s *GoroutineServer) forced() bool {
	select {
	case <-s.forceCh:
		return true
	default:
		return false
	}
}

// gconn is one connection of the GoroutineServer and its goroutine.
type gconn struct {
	srv  *GoroutineServer
	nc   stdnet.Conn
	ip   netip.Addr
	info ConnInfo
	resp chan delivery
	mem  int64 // bytes the memory pool granted to the frame being read; the connection's goroutine only

	mu struct {
		sync.Mutex
		inflight bool // a request is being served: Shutdown lets it finish
		exited   bool
	}
}

// deliver implements callOwner.
func (gc *gconn) deliver(cl *call, r Response) {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	if gc.mu.exited {
		r.done(ErrConnClosed)
		cl.releaseMem()
		return
	}
	gc.resp <- delivery{call: cl, resp: r} // capacity 1, one response per request
}

// abandoned implements callOwner.
func (gc *gconn) abandoned() bool { return gc.srv.forced() }

// interruptIfIdle makes a connection waiting for its next request return
// from its read, so that it sees the shutdown.
func (gc *gconn) interruptIfIdle() {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	if !gc.mu.inflight {
		gc.nc.SetReadDeadline(time.Unix(1, 0))
	}
}

// serve is the connection's goroutine: read a frame, hand it to the
// handlers, wait for the response, write it, repeat.
func (gc *gconn) serve() {
	defer gc.exit()
	fr := gc.frameReader()
	for gc.idle() {
		frame, err := fr.ReadFrame()
		if err != nil {
			gc.countReadError(err)
			return
		}
		if !gc.begin() {
			return
		}
		if !gc.handle(frame) {
			return
		}
	}
}

// frameReader reads the connection's frames; with a memory pool, each
// frame's size is granted (waiting while it does not fit, not reading
// meanwhile: Kafka mutes the channel) before its body is allocated.
func (gc *gconn) frameReader() *FrameReader {
	s := gc.srv
	r := countingReader{gc.nc, &s.stats.bytesIn}
	if s.pool == nil {
		return NewFrameReader(r, s.cfg.SocketRequestMaxBytes, 0)
	}
	return newGatedFrameReader(r, s.cfg.SocketRequestMaxBytes, 0, func(size int) error {
		if size > 0 && !s.pool.acquire(int64(size), s.closingCh) {
			return ErrServerClosed
		}
		gc.mem = int64(size)
		return nil
	})
}

// idle marks the connection as between requests and arms the idle timeout;
// it returns false if the server is shutting down.
func (gc *gconn) idle() bool {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	gc.mu.inflight = false
	if gc.srv.closing() {
		return false
	}
	var deadline time.Time
	if d := gc.srv.cfg.ConnectionsMaxIdle; d > 0 {
		deadline = time.Now().Add(d)
	}
	gc.nc.SetReadDeadline(deadline)
	return true
}

// begin marks a request in flight unless the server is shutting down.
func (gc *gconn) begin() bool {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	if gc.srv.closing() {
		return false
	}
	gc.mu.inflight = true
	return true
}

// countReadError classifies why reading stopped.
func (gc *gconn) countReadError(err error) {
	var fse *FrameSizeError
	switch {
	case errors.As(err, &fse):
		gc.srv.stats.badFrames.Add(1)
	case errors.Is(err, os.ErrDeadlineExceeded) && !gc.srv.closing():
		gc.srv.stats.idleClosed.Add(1)
	}
}

// handle serves one frame; false ends the connection.
func (gc *gconn) handle(frame []byte) bool {
	s := gc.srv
	h, body, err := ParseRequestHeader(frame)
	if err != nil {
		s.stats.badFrames.Add(1)
		return false
	}
	if tc, ok := gc.nc.(*tls.Conn); ok && gc.info.TLS == nil {
		gc.info.TLS = tlsState(tc) // the handshake completed with the first read
	}
	cl := &call{owner: gc, stats: &s.stats, pool: s.pool, req: Request{
		Key: h.Key, Version: h.Version, CorrelationID: h.CorrelationID,
		ClientID: h.ClientID, Flexible: h.Flexible, Body: body,
		Conn: gc.info, Received: time.Now(),
	}}
	cl.req.release = cl.releaseMem
	cl.mem.Store(gc.mem)
	gc.mem = 0
	s.stats.countRequest(h.Key)
	if s.cfg.InlineHandlers {
		// The response arrives on gc.resp (capacity 1) from this very
		// call, or later from another goroutine; either way it is read below.
		s.h.Serve(&cl.req, cl.respond)
	} else if !s.reqs.put(cl, s.forceCh) {
		return false
	}
	select {
	case d := <-gc.resp:
		return gc.respond(&d)
	case <-s.forceCh:
		return false
	}
}

// respond writes (or skips) the response; false ends the connection.
func (gc *gconn) respond(d *delivery) bool {
	defer d.call.releaseMem()
	resp := &d.resp
	if resp.NoResponse && !resp.Close {
		resp.done(nil)
		return gc.throttle(resp.Throttle)
	}
	if len(resp.Parts) > 0 || !resp.Close {
		n, err := writeBlocking(gc.nc, &d.call.req, resp)
		gc.srv.stats.bytesOut.Add(n)
		if err != nil {
			resp.done(errors.Join(ErrConnClosed, err))
			return false
		}
		gc.srv.stats.responses.Add(1)
	}
	resp.done(nil)
	return !resp.Close && gc.throttle(resp.Throttle)
}

// throttle keeps the connection unread for d (KIP-219: a throttled
// client's channel stays muted); false when the server closes meanwhile.
func (gc *gconn) throttle(d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-gc.srv.closingCh:
		return false
	}
}

// exit closes the connection and answers Done of a late response.
func (gc *gconn) exit() {
	gc.nc.Close()
	gc.mu.Lock()
	gc.mu.exited = true
	gc.mu.Unlock()
	select {
	case d := <-gc.resp:
		d.resp.done(ErrConnClosed)
		d.call.releaseMem()
	default:
	}
	s := gc.srv
	if gc.mem > 0 {
		s.pool.release(gc.mem) // closed in the middle of a frame
	}
	s.quotas.dec(gc.ip)
	s.mu.Lock()
	delete(s.mu.conns, gc)
	s.mu.Unlock()
	s.stats.connections.Add(-1)
	s.stats.closed.Add(1)
	s.connWG.Done()
}

// countingReader counts the bytes read from a connection.
type countingReader struct {
	r stdnet.Conn
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// SetConnectionLimits changes max.connections and max.connections.per.ip
// (Kafka's values: Int.MaxValue is unlimited, per IP 0 admits only the
// overrides) for the connections accepted from now on.
func (s *GoroutineServer) SetConnectionLimits(maxConns, perIP int) {
	s.quotas.setLimits(normalLimits(maxConns, perIP))
}
