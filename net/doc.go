// Package net is Varve's network layer: Kafka's request framing and two
// servers behind one asynchronous Handler interface.
//
// The Reactor is built as Kafka's SocketServer is: per listener one acceptor
// goroutine and num.network.threads processors, each an epoll loop
// (edge-triggered, golang.org/x/sys/unix) owning its connections; one
// request channel bounded by queued.max.requests; num.io.threads handler
// goroutines. GoroutineServer serves the same Handler with one goroutine per
// connection and blocking I/O through the Go runtime, for comparison
// (experiments/reactor).
//
// net knows nothing of segments or of the Kafka APIs: it reads frames,
// parses the request header, and writes back bytes and pagecache.Regions
// (sendfile), prefixed with the size and the response header. It imports
// the standard library's net as stdnet.
//
// # TLS
//
// GoroutineServer.ServeTLS serves a listener through crypto/tls; the
// Reactor serves plaintext only. crypto/tls works on a blocking net.Conn
// and has no record-level API (nothing like Java's SSLEngine wrap and
// unwrap) that an edge-triggered epoll loop on raw descriptors could
// drive, and a file region must be encrypted in user space anyway
// (sendfile would put plaintext on the wire), so a TLS connection gets
// its own goroutine: the handshake runs there on the first read, and a
// region is read and copied through the TLS connection
// (pagecache.Region.WriteTo falls back from sendfile because a tls.Conn
// exposes no descriptor). Kafka loses zero-copy under SSL in the same way.
// ConnInfo.TLS carries the handshake's result (the peer's certificates)
// to the Handler.
//
// # Per-connection state
//
// ConnInfo.State is a slot the Handler fills per connection (the broker
// keeps a connection's authentication there); net creates it empty at
// accept and drops it with the connection, and never reads it.
//
// # Wire format
//
// Request frame, big-endian (frame.go, header.go):
//
//	0   int32  size of what follows; 0 <= size <= socket.request.max.bytes,
//	           checked before anything is allocated, else the connection closes
//	4   int16  api key
//	6   int16  api version
//	8   int32  correlation id
//	12  int16  client id length (-1 = null), then the client id bytes
//	    header v2 only (flexible versions, known from kmsg): uvarint count
//	    of tagged fields, each uvarint tag, uvarint size, data
//	    then the request body, handed to the Handler as Request.Body
//
// Response frame (send.go): int32 size, int32 correlation id, then for
// flexible versions one 0 byte (no tagged fields; response header v1) except
// for ApiVersions, whose response header is always v0; then the Response
// parts in order.
//
// # Ordering and flow control
//
// A connection has at most one request in flight: once a frame is read the
// connection is muted (not read) until its response has been written
// entirely, or a NoResponse (acks=0) or Close response arrives. A response
// with Throttle keeps the connection muted for that long after it is
// written or skipped (KIP-219: the broker answers a client over its quota
// at once, with throttle_time_ms, and reads nothing more from it until the
// throttle time has passed); a draining server does not wait. Pipelined
// requests wait in the socket buffer, so responses leave in request order
// even when the handler completes requests out of order. When the request
// channel is full, a Reactor processor stops reading all its connections
// (still writing responses) until a handler takes a request and wakes it;
// a GoroutineServer connection blocks on the channel.
//
// # Memory and connection limits
//
// Request memory is bounded by one pool of queued.max.request.bytes per
// server (Kafka's MemoryPool, pool.go). Once a frame's size prefix is read
// and checked, the connection asks the pool for the frame's size before the
// body buffer exists; the bytes return when the response has been written
// (or skipped, or abandoned), or when the connection closes mid-frame:
// exactly once, through call.releaseMem or the connection's own field.
// A request the pool cannot grant waits in arrival order, and its
// connection is not read meanwhile (Kafka mutes the channel): a Reactor
// processor parks it and resumes it when the pool notifies that it was
// granted; a GoroutineServer connection blocks in the pool. While the pool
// is short, a processor reads a new frame's 4-byte prefix alone, so a
// waiting body stays in the socket. The pool is strict: the bytes granted
// never exceed its capacity, which is at least socket.request.max.bytes so
// every legal request fits an idle pool. Unset (Kafka's -1, unbounded),
// the capacity is half of GOMEMLIMIT if set, else a quarter of physical or
// cgroup memory (DefaultQueuedMaxRequestBytes).
//
// Connections are counted per client IP across a server's listeners
// (max.connections.per.ip and its overrides, quota.go): one over the limit
// is closed at once after accept. max.connection.creation.rate (KIP-612,
// broker-wide and per listener) is a token bucket whose burst is one
// second's worth: the acceptor waits before handing over a connection
// above the rate, as Kafka's acceptor is throttled, rather than closing it.
//
// Partial writes (of bytes, through writev, or of regions, through
// pagecache.Region.SendTo) resume on the next EPOLLOUT; a processor never
// blocks on a socket. Idle connections (no request in flight) are closed
// after connections.max.idle.ms.
//
// # Goroutines and ownership
//
//   - acceptor (one per Reactor.Serve): accepts with accept4 on the
//     listener's descriptor, waits for the creation rates, checks the
//     per-IP and total connection limits, applies socket options, queues
//     connections round-robin on its processors' bounded queues.
//   - processor (num.network.threads per listener): owns its epoll fd,
//     eventfd and connections; every rconn field is touched by it alone.
//     Handlers reach it only through enqueue: a mutex-guarded list, plus an
//     eventfd write when the processor sleeps in epoll_wait. Before
//     blocking, a processor yields its P once (runtime.Gosched) so the
//     handler it just woke can run without waiting for sysmon.
//   - handler (num.io.threads, shared by all listeners): takes requests and
//     calls Handler.Serve.
//
// Both pools resize on a running server (KIP-226's DynamicThreadPool):
// SetIOThreads starts handlers, or posts one retire token per handler too
// many, which a handler takes only between requests, so no request is cut
// short, lost or served twice. Reactor.SetNetworkThreads adds processors
// to every acceptor's rotation, or takes the last ones out of it; a
// removed processor drains as in Shutdown (no more reads, each connection
// closes after its response in flight) and exits. The goroutine server has
// no processors: there SetNetworkThreads does nothing.
//   - GoroutineServer: one goroutine per Serve (accept loop) and one per
//     connection, plus the handlers.
//
// The Handler's respond function may be called from any goroutine, exactly
// once; later calls are ignored and counted. Response.Done, if set, runs on a
// network goroutine when the response has been handed to the kernel or
// abandoned; a region's file must stay open until then.
//
// # Shutdown
//
// Shutdown stops the acceptors, closes connections without a request in
// flight, lets the others finish (their response is written, then they
// close), then stops the handler goroutines. If its context ends first,
// every connection is closed at once; handlers still inside Serve return
// when Serve returns, and their responses get ErrServerClosed through Done.
package net
