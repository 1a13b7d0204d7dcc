package net

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

const (
	wakeID          = 0        // epoll data of the processor's eventfd; connection ids start at 1
	maxEvents       = 256      // epoll_wait batch
	scratchSize     = 64 << 10 // per-processor read buffer for small frames
	readBudget      = 1 << 20  // bytes read from one connection before serving others
	newConnsBacklog = 20       // Kafka's ConnectionQueueSize
)

// delivery is a response waiting for its processor.
type delivery struct {
	conn *rconn
	call *call
	resp Response
}

// processor is one of Kafka's network threads: it owns an epoll instance and
// the connections the acceptor gave it, reads their requests, puts them in
// the request channel, and writes their responses. Everything except the
// fields under mu and the atomics is touched by its own goroutine only.
type processor struct {
	id       int
	srv      *Reactor
	epfd     int
	wake     *wakeup
	newConns chan *rconn

	events  []unix.EpollEvent
	conns   map[uint64]*rconn
	scratch []byte
	idle    idleList
	ready   []*rconn    // connections with unread bytes, served next turn
	stalled *call       // read, but refused by the full request channel
	parked  []*rconn    // waiting for the memory pool
	muted   []*rconn    // throttled after their response (KIP-219), in no order
	granted atomic.Bool // the memory pool granted a parked connection
	now     time.Time
	spare   []delivery
	drain   bool

	mu struct {
		sync.Mutex
		responses []delivery
		closed    bool
	}

	pending  atomic.Bool // responses waiting in mu.responses
	sleeping atomic.Bool // in (or entering) a blocking epoll_wait

	started   time.Time
	idleNanos atomic.Int64
	nconns    atomic.Int64
	isStalled atomic.Bool
	exited    atomic.Bool
	retiring  atomic.Bool // removed by a num.network.threads shrink: drain, then exit
	done      chan struct{}
}

func newProcessor(id int, srv *Reactor) (*processor, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("processor %d: epoll_create1: %w", id, err)
	}
	w, err := newWakeup()
	if err != nil {
		unix.Close(epfd)
		return nil, fmt.Errorf("processor %d: %w", id, err)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN}
	setEventID(&ev, wakeID)
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, w.fd, &ev); err != nil {
		unix.Close(epfd)
		w.close()
		return nil, fmt.Errorf("processor %d: add eventfd: %w", id, err)
	}
	return &processor{
		id: id, srv: srv, epfd: epfd, wake: w,
		newConns: make(chan *rconn, newConnsBacklog),
		events:   make([]unix.EpollEvent, maxEvents),
		conns:    map[uint64]*rconn{},
		scratch:  make([]byte, scratchSize),
		started:  time.Now(),
		done:     make(chan struct{}),
	}, nil
}

// setEventID stores a 64-bit id in the epoll data union (Fd and Pad are its
// two halves on every Linux architecture).
func setEventID(ev *unix.EpollEvent, id uint64) {
	ev.Fd = int32(uint32(id))
	ev.Pad = int32(uint32(id >> 32))
}

func eventID(ev *unix.EpollEvent) uint64 {
	return uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32
}

// notify interrupts epoll_wait, unless the processor has exited (its
// eventfd may then be closed).
func (p *processor) notify() {
	p.mu.Lock()
	if !p.mu.closed {
		p.wake.signal()
	}
	p.mu.Unlock()
}

// enqueue is called by handler goroutines with a response for conn.
func (p *processor) enqueue(conn *rconn, cl *call, r Response) {
	p.mu.Lock()
	if p.mu.closed {
		p.mu.Unlock()
		r.done(ErrServerClosed)
		cl.releaseMem()
		return
	}
	p.mu.responses = append(p.mu.responses, delivery{conn: conn, call: cl, resp: r})
	// Wake the processor only if it is blocked (or about to block) in
	// epoll_wait: a busy processor finds the response on its next turn
	// without an eventfd write and read. See wait for the other half.
	p.pending.Store(true)
	if p.sleeping.Load() && p.sleeping.CompareAndSwap(true, false) {
		p.wake.signal()
	}
	p.mu.Unlock()
}

// run is the processor loop (Kafka's Processor.run): configure new
// connections, write new responses, poll, read, expire idle connections.
func (p *processor) run() {
	defer p.exit()
	p.now = time.Now()
	for {
		if p.srv.force.Load() {
			return
		}
		if (p.srv.draining.Load() || p.retiring.Load()) && !p.drain {
			p.startDrain()
		}
		p.configureNew()
		p.processResponses()
		p.retryStalled()
		p.resumeGranted()
		p.readReady()
		if p.drain && len(p.conns) == 0 {
			return
		}
		if err := p.poll(p.timeout()); err != nil {
			p.srv.fail(err)
			return
		}
		p.expireIdle()
		p.unthrottle()
	}
}

// poll waits for events for at most d and dispatches them.
func (p *processor) poll(d time.Duration) error {
	n, err := p.wait(d)
	if err == unix.EINTR {
		return nil
	}
	if err != nil {
		return fmt.Errorf("processor %d: epoll_wait: %w", p.id, err)
	}
	for i := range n {
		ev := &p.events[i]
		id := eventID(ev)
		if id == wakeID {
			p.wake.drain()
			continue
		}
		if c := p.conns[id]; c != nil {
			p.handleEvent(c, ev.Events)
		}
	}
	return nil
}

// wait is epoll_wait, timing the blocking part as idle time.
//
// A goroutine blocked in a system call keeps its P until the runtime's
// sysmon takes it back, which can take up to milliseconds; goroutines made
// runnable by this processor (a handler woken by the request channel) would
// wait that long. So the processor first polls without blocking and, when
// nothing is ready, yields its P once (runtime.Gosched) before blocking, as
// Go event-loop libraries such as gnet do.
func (p *processor) wait(d time.Duration) (int, error) {
	n, err := unix.EpollWait(p.epfd, p.events, 0)
	if n != 0 || d == 0 || (err != nil && err != unix.EINTR) {
		p.now = time.Now()
		return n, err
	}
	runtime.Gosched()
	// Announce the sleep, then look for responses delivered meanwhile:
	// enqueue stores pending before loading sleeping, so either it sees
	// sleeping and signals the eventfd, or this load sees pending.
	p.sleeping.Store(true)
	if p.pending.Load() {
		p.sleeping.Store(false)
		p.now = time.Now()
		return 0, nil
	}
	ms := int((d + time.Millisecond - 1) / time.Millisecond)
	t0 := time.Now()
	n, err = unix.EpollWait(p.epfd, p.events, ms)
	p.sleeping.Store(false)
	p.now = time.Now()
	p.idleNanos.Add(int64(p.now.Sub(t0)))
	return n, err
}

// handleEvent records readiness and serves it.
func (p *processor) handleEvent(c *rconn, ev uint32) {
	if ev&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
		c.readable = true
	}
	if ev&(unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
		c.hup = true
	}
	if ev&(unix.EPOLLOUT|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
		c.writable = true
		if c.sending {
			p.write(c)
		}
	}
	if c.readable {
		p.read(c)
	}
}

// timeout is how long the next poll may wait.
func (p *processor) timeout() time.Duration {
	if (len(p.ready) > 0 && p.stalled == nil && !p.drain) || len(p.newConns) > 0 {
		return 0
	}
	d := pollTimeout
	for _, c := range p.muted {
		d = min(d, max(c.throttledUntil.Sub(p.now), 0))
	}
	if maxIdle := p.srv.cfg.ConnectionsMaxIdle; maxIdle > 0 {
		if c := p.idle.oldest(); c != nil {
			d = min(d, max(c.lastActive.Add(maxIdle).Sub(p.now), 0))
		}
	}
	return d
}

// configureNew registers the connections the acceptor queued.
func (p *processor) configureNew() {
	for {
		select {
		case c := <-p.newConns:
			p.register(c)
		default:
			return
		}
	}
}

// register adds c to the epoll set, edge-triggered: readiness is tracked in
// c.readable/c.writable, so muting never needs an epoll_ctl.
func (p *processor) register(c *rconn) {
	if p.drain {
		p.dropNew(c)
		return
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET}
	setEventID(&ev, c.id)
	if err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, c.fd, &ev); err != nil {
		p.dropNew(c)
		return
	}
	c.proc = p
	c.writable = true
	p.conns[c.id] = c
	p.nconns.Add(1)
	p.idle.touch(c, time.Now())
}

// dropNew closes a connection that was never registered.
func (p *processor) dropNew(c *rconn) {
	unix.Close(c.fd)
	p.srv.quotas.dec(c.ip)
	p.srv.stats.connections.Add(-1)
	p.srv.stats.closed.Add(1)
}

// processResponses takes the responses handlers delivered and starts
// writing them.
func (p *processor) processResponses() {
	p.mu.Lock()
	batch := p.mu.responses
	p.mu.responses = p.spare[:0]
	p.pending.Store(false)
	p.mu.Unlock()
	for i := range batch {
		p.handleResponse(&batch[i])
		batch[i] = delivery{}
	}
	p.spare = batch[:0]
}

// handleResponse writes, skips or closes, as the response asks.
func (p *processor) handleResponse(d *delivery) {
	c, resp := d.conn, d.resp
	if c.closed || c.inflight != d.call {
		resp.done(ErrConnClosed)
		d.call.releaseMem()
		return
	}
	if resp.Close && len(resp.Parts) == 0 {
		resp.done(nil)
		d.call.releaseMem()
		p.closeConn(c, nil)
		return
	}
	if resp.NoResponse && !resp.Close {
		resp.done(nil)
		d.call.releaseMem()
		p.release(c, resp.Throttle)
		return
	}
	if err := c.send.init(&d.call.req, resp); err != nil {
		resp.done(err)
		d.call.releaseMem()
		p.closeConn(c, err)
		return
	}
	c.sending = true
	p.write(c)
}

// write sends as much of c's response as the socket takes; the rest waits
// for EPOLLOUT. A finished response unmutes the connection.
func (p *processor) write(c *rconn) {
	if !c.writable {
		return
	}
	n, done, err := c.send.writeTo(c.fd)
	p.srv.stats.bytesOut.Add(n)
	if err != nil {
		p.closeConn(c, err)
		return
	}
	if !done {
		c.writable = false
		p.srv.stats.sendWaits.Add(1)
		return
	}
	resp := c.send.resp
	c.send.resp = Response{}
	c.sending = false
	p.srv.stats.responses.Add(1)
	resp.done(nil)
	c.inflight.releaseMem()
	if resp.Close {
		p.closeConn(c, nil)
		return
	}
	p.release(c, resp.Throttle)
}

// release ends c's request: unmuted at once, or after throttle (Kafka
// keeps a throttled client's channel muted until its throttle time has
// passed, KIP-219). A draining processor does not wait.
func (p *processor) release(c *rconn, throttle time.Duration) {
	if throttle <= 0 || p.drain {
		p.unmute(c)
		return
	}
	c.inflight = nil
	c.throttled, c.throttledUntil = true, p.now.Add(throttle)
	p.muted = append(p.muted, c)
	p.idle.touch(c, p.now)
}

// unthrottle unmutes the connections whose throttle time has passed.
func (p *processor) unthrottle() {
	kept := p.muted[:0]
	var due []*rconn
	for _, c := range p.muted {
		switch {
		case c.closed:
		case p.drain || !p.now.Before(c.throttledUntil):
			due = append(due, c)
		default:
			kept = append(kept, c)
		}
	}
	clear(p.muted[len(kept):])
	p.muted = kept
	for _, c := range due {
		c.throttled = false
		p.unmute(c)
	}
}

// unmute ends c's request and lets it be read again (Kafka unmutes after
// the send completes, or at once for a NoOpResponse).
func (p *processor) unmute(c *rconn) {
	c.inflight = nil
	if p.drain {
		p.closeConn(c, nil)
		return
	}
	p.idle.touch(c, p.now)
	p.read(c)
}

// read reads c until a frame completes (then c is muted), the socket is
// drained, or c has had its share of this turn.
func (p *processor) read(c *rconn) {
	budget := readBudget
	for c.inflight == nil && !c.closed && c.memWait == nil && !c.throttled {
		if p.stalled != nil || p.drain {
			p.markReady(c)
			return
		}
		if len(c.pending) > 0 {
			p.feedPending(c)
			continue
		}
		if !c.readable {
			return
		}
		if budget <= 0 {
			p.markReady(c)
			return
		}
		budget -= p.readOnce(c)
	}
}

// markReady remembers that c may have unread bytes.
func (p *processor) markReady(c *rconn) {
	if (c.readable || len(c.pending) > 0) && !c.queued && !c.closed {
		c.queued = true
		p.ready = append(p.ready, c)
	}
}

// readReady serves connections left with unread bytes, unless the request
// channel is still full.
func (p *processor) readReady() {
	if p.stalled != nil || p.drain || len(p.ready) == 0 {
		return
	}
	batch := p.ready
	p.ready = nil
	for _, c := range batch {
		c.queued = false
		p.read(c)
	}
}

// feedPending gives the decoder bytes read earlier past a frame.
func (p *processor) feedPending(c *rconn) {
	n := p.feed(c, c.pending)
	c.pending = c.pending[n:]
	if len(c.pending) == 0 {
		c.pending = nil
	}
}

// feed gives data to c's decoder and handles the result; it returns how
// many bytes the decoder took. When the decoder stops at a size prefix, the
// memory pool is asked for the frame's size: granted, the body is fed on;
// refused, c is parked and the rest of data stays unread.
func (p *processor) feed(c *rconn, data []byte) int {
	n, frame, err := c.dec.feed(data)
	if err == nil && frame == nil {
		if size, ok := c.dec.awaiting(); ok {
			if frame = p.admit(c, size, len(data)-n); frame == nil && c.memWait == nil {
				var k int
				k, frame, err = c.dec.feed(data[n:])
				n += k
			}
		}
	}
	p.afterFeed(c, frame, err)
	return n
}

// admit asks the memory pool for a frame of size bytes before its body is
// allocated. Granted, the body starts (avail bytes of it are at hand) and
// an empty frame is returned whole; refused, c is parked (Kafka mutes the
// channel) until the pool grants it and notifies the processor.
func (p *processor) admit(c *rconn, size, avail int) []byte {
	if pool := p.srv.pool; pool != nil && size > 0 {
		if w := pool.tryAcquire(int64(size), p.memGranted); w != nil {
			c.memWait = w
			p.parked = append(p.parked, c)
			return nil
		}
		c.mem = int64(size)
	}
	return c.dec.admit(avail)
}

// memGranted is the pool's notification that a parked connection may read.
func (p *processor) memGranted() {
	p.granted.Store(true)
	p.notify()
}

// resumeGranted reads the parked connections the pool has granted memory.
func (p *processor) resumeGranted() {
	if !p.granted.Swap(false) {
		return
	}
	var resume []*rconn
	kept := p.parked[:0]
	for _, c := range p.parked {
		if c.memWait.granted.Load() {
			resume = append(resume, c)
		} else {
			kept = append(kept, c)
		}
	}
	clear(p.parked[len(kept):])
	p.parked = kept
	for _, c := range resume {
		c.mem, c.memWait = c.memWait.size, nil
		if frame := c.dec.admit(len(c.pending)); frame != nil {
			p.onFrame(c, frame)
		}
		p.read(c)
	}
}

// unpark forgets a parked connection that closes; its bytes, if granted
// meanwhile, go back to the pool.
func (p *processor) unpark(c *rconn) {
	p.srv.pool.cancel(c.memWait)
	c.memWait = nil
	for i, x := range p.parked {
		if x == c {
			p.parked = append(p.parked[:i], p.parked[i+1:]...)
			break
		}
	}
}

// readOnce performs one read(2) on c and returns the bytes read.
func (p *processor) readOnce(c *rconn) int {
	buf := c.dec.directSpace()
	direct := buf != nil
	if !direct {
		buf = p.readSpace(c)
	}
	n, err := readFD(c.fd, buf)
	switch {
	case err == unix.EAGAIN:
		c.readable = false
		return 0
	case err != nil:
		p.closeConn(c, err)
		return 0
	case n == 0:
		p.closeConn(c, nil) // EOF: a truncated frame is simply dropped
		return 0
	}
	p.srv.stats.bytesIn.Add(int64(n))
	p.idle.touch(c, p.now)
	if n < len(buf) && !c.hup {
		// A short read drained the socket; the next bytes bring a new edge.
		// Not so for an end of stream already signalled: read on to see it.
		c.readable = false
	}
	if direct {
		p.afterFeed(c, c.dec.commit(n), nil)
		return n
	}
	if k := p.feed(c, buf[:n]); k < n && !c.closed {
		c.pending = append([]byte(nil), buf[k:n]...)
	}
	return n
}

// readSpace is the scratch buffer to read c into. Between frames, while the
// memory pool is short (less free than the scratch buffer holds, or
// requests already waiting), it is only the rest of the size prefix, as
// Kafka's NetworkReceive reads it: a connection that then waits for memory
// leaves its body in the socket, not in a copy outside the pool.
func (p *processor) readSpace(c *rconn) []byte {
	if pool := p.srv.pool; pool != nil && c.dec.size < 0 && len(c.pending) == 0 && pool.short(scratchSize) {
		return p.scratch[:sizePrefixLen-c.dec.nhdr]
	}
	return p.scratch
}

// readFD is read(2) retrying EINTR.
func readFD(fd int, buf []byte) (int, error) {
	for {
		n, err := unix.Read(fd, buf)
		if err != unix.EINTR {
			return n, err
		}
	}
}

// afterFeed handles the decoder's result: a framing error closes the
// connection (Kafka's InvalidReceiveException), a frame becomes a request.
func (p *processor) afterFeed(c *rconn, frame []byte, err error) {
	if err != nil {
		p.srv.stats.badFrames.Add(1)
		p.closeConn(c, err)
		return
	}
	if frame != nil {
		p.onFrame(c, frame)
	}
}

// onFrame parses the header, mutes c and submits the request.
func (p *processor) onFrame(c *rconn, frame []byte) {
	h, body, err := ParseRequestHeader(frame)
	if err != nil {
		p.srv.stats.badFrames.Add(1)
		p.closeConn(c, err)
		return
	}
	cl := &call{owner: c, stats: &p.srv.stats, pool: p.srv.pool, req: Request{
		Key: h.Key, Version: h.Version, CorrelationID: h.CorrelationID,
		ClientID: h.ClientID, Flexible: h.Flexible, Body: body,
		Conn: c.info, Received: p.now,
	}}
	cl.req.release = cl.releaseMem
	cl.mem.Store(c.mem)
	c.mem = 0
	p.srv.stats.countRequest(h.Key)
	c.inflight = cl
	p.idle.remove(c)
	p.submit(cl)
}

// submit puts cl in the request channel. When the channel is full the
// processor stops reading (Kafka blocks its processor thread in put; here
// the processor keeps writing responses) until a handler makes room.
func (p *processor) submit(cl *call) {
	rc := p.srv.reqs
	if rc.tryPut(cl) {
		return
	}
	p.stalled = cl
	p.isStalled.Store(true)
	p.srv.stats.queueFullStalls.Add(1)
	rc.stalled.Add(1)
	// Retry after announcing the stall: a handler that took a request
	// before it could see the announcement left room, and one that takes
	// a request later will wake us.
	p.retryStalled()
}

// retryStalled tries again to submit the refused request.
func (p *processor) retryStalled() {
	if p.stalled == nil || !p.srv.reqs.tryPut(p.stalled) {
		return
	}
	p.stalled = nil
	p.isStalled.Store(false)
	p.srv.reqs.stalled.Add(-1)
}

// expireIdle closes connections idle for connections.max.idle.ms.
func (p *processor) expireIdle() {
	maxIdle := p.srv.cfg.ConnectionsMaxIdle
	if maxIdle <= 0 {
		return
	}
	for c := p.idle.oldest(); c != nil && p.now.Sub(c.lastActive) >= maxIdle; c = p.idle.oldest() {
		p.srv.stats.idleClosed.Add(1)
		p.closeConn(c, nil)
	}
}

// startDrain begins a graceful shutdown: no more reads; connections without
// a request in flight close now, the others after their response.
func (p *processor) startDrain() {
	p.drain = true
	for _, c := range p.conns {
		if c.inflight == nil {
			p.closeConn(c, nil)
		}
	}
	p.configureNew()
}

// closeConn closes c and abandons any response being written to it.
func (p *processor) closeConn(c *rconn, err error) {
	if c.closed {
		return
	}
	c.closed = true
	c.gone.Store(true)
	unix.EpollCtl(p.epfd, unix.EPOLL_CTL_DEL, c.fd, nil)
	unix.Close(c.fd)
	delete(p.conns, c.id)
	p.idle.remove(c)
	p.nconns.Add(-1)
	p.srv.stats.connections.Add(-1)
	p.srv.stats.closed.Add(1)
	p.srv.quotas.dec(c.ip)
	if c.sending {
		c.sending = false
		c.send.resp.done(errors.Join(ErrConnClosed, err))
		c.send.resp = Response{}
		c.inflight.releaseMem()
	}
	if c.memWait != nil {
		p.unpark(c)
	}
	if c.mem > 0 {
		p.srv.pool.release(c.mem) // closed in the middle of a frame
		c.mem = 0
	}
	c.pending = nil
	c.dec = frameDecoder{}
}

// exit closes everything the processor owns. Responses delivered from now
// on get ErrServerClosed.
func (p *processor) exit() {
	p.mu.Lock()
	p.mu.closed = true
	left := p.mu.responses
	p.mu.responses = nil
	p.mu.Unlock()
	p.exited.Store(true)
	for _, d := range left {
		d.resp.done(ErrServerClosed)
		d.call.releaseMem()
	}
	for _, c := range p.conns {
		p.closeConn(c, nil)
	}
	p.dropQueued()
	if p.stalled != nil {
		p.stalled.releaseMem()
		p.srv.reqs.stalled.Add(-1)
		p.stalled = nil
		p.isStalled.Store(false)
	}
	p.srv.reqs.unregister(p.id)
	unix.Close(p.epfd)
	p.wake.close()
	close(p.done)
}

// dropQueued closes connections still waiting in newConns.
func (p *processor) dropQueued() {
	for {
		select {
		case c := <-p.newConns:
			p.dropNew(c)
		default:
			return
		}
	}
}

// stats snapshots the processor.
func (p *processor) stats() ProcessorStats {
	return ProcessorStats{
		ID:          p.id,
		Connections: p.nconns.Load(),
		IdleTime:    time.Duration(p.idleNanos.Load()),
		WallTime:    time.Since(p.started),
		Stalled:     p.isStalled.Load(),
	}
}
