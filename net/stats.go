package net

import (
	"sync/atomic"
	"time"
)

// keySlots bounds the per-key request counters; keys outside [0, keySlots)
// are counted together as unknown.
const keySlots = 128

// counters are the atomics both servers update. Plain atomics, no metrics
// library: the broker exports them as it likes.
type counters struct {
	queueSize         atomic.Int64
	connections       atomic.Int64
	accepted          atomic.Int64
	closed            atomic.Int64
	idleClosed        atomic.Int64
	rejected          atomic.Int64 // over max.connections
	rejectedPerIP     atomic.Int64 // over max.connections.per.ip (or its override)
	acceptThrottles   atomic.Int64 // connections delayed by max.connection.creation.rate
	acceptThrottleNs  atomic.Int64 // time those delays took
	badFrames         atomic.Int64
	bytesIn           atomic.Int64
	bytesOut          atomic.Int64
	requests          atomic.Int64
	responses         atomic.Int64
	queueFullStalls   atomic.Int64
	sendWaits         atomic.Int64
	byKey             [keySlots]atomic.Int64
	unknownKey        atomic.Int64
	duplicateResponds atomic.Int64
}

// countRequest records one request of the given key.
func (c *counters) countRequest(key int16) {
	c.requests.Add(1)
	if key >= 0 && key < keySlots {
		c.byKey[key].Add(1)
	} else {
		c.unknownKey.Add(1)
	}
}

// Stats is a snapshot of a server's counters. Counters are cumulative since
// the server was created; gauges (RequestQueueSize, Connections) are current.
type Stats struct {
	RequestQueueSize      int64 // requests waiting in the request channel (Kafka's RequestQueueSize)
	Connections           int64 // open connections
	ConnectionsAccepted   int64
	ConnectionsClosed     int64
	IdleConnectionsClosed int64 // closed by connections.max.idle.ms
	ConnectionsRejected   int64 // closed at once because of max.connections
	// ConnectionsRejectedPerIP counts connections closed at once because
	// their address had max.connections.per.ip (or its override) open.
	ConnectionsRejectedPerIP int64
	// AcceptThrottles counts connections whose hand-over waited for
	// max.connection.creation.rate (KIP-612); AcceptThrottleTime sums the
	// waits (Kafka's connection-accept-throttle-time).
	AcceptThrottles    int64
	AcceptThrottleTime time.Duration
	// MemoryPoolCapacity is queued.max.request.bytes in force;
	// MemoryPoolUsed the bytes granted now to requests being read or served
	// (Kafka's MemoryPoolUsed); MemoryPoolWaits counts requests that waited
	// for memory, not read meanwhile; MemoryPoolWaiting those waiting now.
	MemoryPoolCapacity int64
	MemoryPoolUsed     int64
	MemoryPoolWaits    int64
	MemoryPoolWaiting  int64
	BadFrames          int64 // connections closed for a bad size prefix or header
	BytesIn            int64 // bytes read from sockets, size prefixes included
	BytesOut           int64 // bytes written to sockets, size prefixes and regions included
	Requests           int64
	Responses          int64 // responses fully written
	RequestsByKey      map[int16]int64
	UnknownKeyRequests int64 // requests whose key is outside [0, 128)
	QueueFullStalls    int64 // times reading stopped because the request channel was full
	SendWaits          int64 // Reactor: times a response waited for EPOLLOUT (a partial write resumed later)
	DuplicateResponds  int64 // respond calls after the first (ignored)
	// IOThreads is num.io.threads in force; IOThreadsRunning the handler
	// goroutines alive now (more than IOThreads for a moment after a
	// shrink, while the extra ones finish their request).
	IOThreads        int64
	IOThreadsRunning int64
	// NetworkThreads is num.network.threads in force (per listener, as
	// Kafka counts it); 0 for the goroutine server, which has none.
	// Plus adds them, as it adds the other gauges.
	NetworkThreads int64
	Processors     []ProcessorStats
}

// ProcessorStats describes one Reactor processor.
type ProcessorStats struct {
	ID          int
	Connections int64
	IdleTime    time.Duration // time spent in epoll_wait
	WallTime    time.Duration // time since the processor started
	Stalled     bool          // not reading: the request channel is full
}

// IdleRatio is the fraction of the processor's life spent waiting in
// epoll_wait (Kafka's NetworkProcessorAvgIdlePercent, cumulative). Take two
// snapshots and divide the differences for a ratio over an interval.
func (p ProcessorStats) IdleRatio() float64 {
	if p.WallTime <= 0 {
		return 1
	}
	return float64(p.IdleTime) / float64(p.WallTime)
}

// snapshot copies the counters.
func (c *counters) snapshot() Stats {
	s := Stats{
		RequestQueueSize:         c.queueSize.Load(),
		Connections:              c.connections.Load(),
		ConnectionsAccepted:      c.accepted.Load(),
		ConnectionsClosed:        c.closed.Load(),
		IdleConnectionsClosed:    c.idleClosed.Load(),
		ConnectionsRejected:      c.rejected.Load(),
		ConnectionsRejectedPerIP: c.rejectedPerIP.Load(),
		AcceptThrottles:          c.acceptThrottles.Load(),
		AcceptThrottleTime:       time.Duration(c.acceptThrottleNs.Load()),
		BadFrames:                c.badFrames.Load(),
		BytesIn:                  c.bytesIn.Load(),
		BytesOut:                 c.bytesOut.Load(),
		Requests:                 c.requests.Load(),
		Responses:                c.responses.Load(),
		UnknownKeyRequests:       c.unknownKey.Load(),
		QueueFullStalls:          c.queueFullStalls.Load(),
		SendWaits:                c.sendWaits.Load(),
		DuplicateResponds:        c.duplicateResponds.Load(),
		RequestsByKey:            map[int16]int64{},
	}
	for k := range c.byKey {
		if n := c.byKey[k].Load(); n > 0 {
			s.RequestsByKey[int16(k)] = n
		}
	}
	return s
}

// addPool copies the memory pool's figures into s.
func (s *Stats) addPool(p *memoryPool) {
	if p == nil {
		return
	}
	s.MemoryPoolCapacity = p.capacity
	s.MemoryPoolUsed = p.used.Load()
	s.MemoryPoolWaits = p.waits.Load()
	s.MemoryPoolWaiting = p.queued.Load()
}

// Plus adds two servers' snapshots, for a node serving its listeners
// with more than one server (TLS listeners with a GoroutineServer beside
// a Reactor): counters and gauges add up, per-key counts merge, and the
// processors of both are listed.
func (s Stats) Plus(o Stats) Stats {
	out := s
	for _, f := range []struct{ dst, src *int64 }{
		{&out.RequestQueueSize, &o.RequestQueueSize}, {&out.Connections, &o.Connections},
		{&out.ConnectionsAccepted, &o.ConnectionsAccepted}, {&out.ConnectionsClosed, &o.ConnectionsClosed},
		{&out.IdleConnectionsClosed, &o.IdleConnectionsClosed}, {&out.ConnectionsRejected, &o.ConnectionsRejected},
		{&out.ConnectionsRejectedPerIP, &o.ConnectionsRejectedPerIP}, {&out.AcceptThrottles, &o.AcceptThrottles},
		{&out.MemoryPoolCapacity, &o.MemoryPoolCapacity}, {&out.MemoryPoolUsed, &o.MemoryPoolUsed},
		{&out.MemoryPoolWaits, &o.MemoryPoolWaits}, {&out.MemoryPoolWaiting, &o.MemoryPoolWaiting},
		{&out.BadFrames, &o.BadFrames}, {&out.BytesIn, &o.BytesIn}, {&out.BytesOut, &o.BytesOut},
		{&out.Requests, &o.Requests}, {&out.Responses, &o.Responses},
		{&out.UnknownKeyRequests, &o.UnknownKeyRequests}, {&out.QueueFullStalls, &o.QueueFullStalls},
		{&out.SendWaits, &o.SendWaits}, {&out.DuplicateResponds, &o.DuplicateResponds},
		{&out.IOThreads, &o.IOThreads}, {&out.IOThreadsRunning, &o.IOThreadsRunning},
		{&out.NetworkThreads, &o.NetworkThreads},
	} {
		*f.dst += *f.src
	}
	out.AcceptThrottleTime += o.AcceptThrottleTime
	out.RequestsByKey = make(map[int16]int64, len(s.RequestsByKey)+len(o.RequestsByKey))
	for _, m := range []map[int16]int64{s.RequestsByKey, o.RequestsByKey} {
		for k, n := range m {
			out.RequestsByKey[k] += n
		}
	}
	out.Processors = append(append([]ProcessorStats(nil), s.Processors...), o.Processors...)
	return out
}
