package net

import (
	"net/netip"
	"sync/atomic"
	"time"
)

// rconn is a connection owned by one Reactor processor: Kafka's KafkaChannel.
// All fields except gone are touched only by the owning processor goroutine.
type rconn struct {
	id   uint64
	fd   int // non-blocking socket, closed by the processor
	info ConnInfo
	ip   netip.Addr // counted by the server's connQuotas
	proc *processor

	dec      frameDecoder
	mem      int64      // bytes the memory pool granted to the frame being read
	memWait  *memWaiter // the pool could not grant the next frame: not read until it does
	pending  []byte     // bytes read past the last frame (a pipelining client)
	readable bool       // EPOLLIN seen and no EAGAIN since (edge-triggered)
	writable bool       // no EAGAIN since the last EPOLLOUT
	hup      bool       // peer closed or error seen: read until EOF, never trust a short read

	// inflight is the request handed to the handlers; while it is set the
	// connection is muted (not read), so at most one request per connection
	// is in flight and responses leave in request order.
	inflight *call
	send     sendState
	sending  bool // send holds a response being written
	closed   bool
	queued   bool // in the processor's ready list

	// throttled: the last response asked for the connection to stay muted
	// until throttledUntil (KIP-219); it is in the processor's throttled
	// list and is not read meanwhile.
	throttled      bool
	throttledUntil time.Time

	lastActive         time.Time
	idlePrev, idleNext *rconn
	inIdle             bool

	gone atomic.Bool // closed; read by handler goroutines
}

// deliver implements callOwner: hand the response to the owning processor.
func (c *rconn) deliver(cl *call, r Response) { c.proc.enqueue(c, cl, r) }

// abandoned implements callOwner: the processor was force-closed.
func (c *rconn) abandoned() bool { return c.proc.exited.Load() }
