package net

import (
	"crypto/tls"
	stdnet "net"
	"time"

	"github.com/varve/varve/pagecache"
)

// ConnInfo identifies the connection a request came on.
type ConnInfo struct {
	ID       uint64      // unique per server, never reused
	Listener string      // the listener's address, as Kafka names listeners by their endpoint
	Remote   stdnet.Addr // the peer
	// TLS is the handshake's result on a connection served through
	// ServeTLS (the peer's certificates, the version and suite agreed);
	// nil on a plaintext connection.
	TLS *tls.ConnectionState
	// State is the Handler's own per-connection value (never nil).
	State *ConnState
}

// Request is one request read from a connection. Body is the request after
// its header; it belongs to the handler (nothing in net touches it after
// Serve is called).
type Request struct {
	Key           int16
	Version       int16
	CorrelationID int32
	ClientID      string
	Flexible      bool // request header v2; the response header will be v1 (except ApiVersions)
	Body          []byte
	Conn          ConnInfo
	Received      time.Time // when the last byte of the frame was read

	release func() // returns the request's bytes to the memory pool, once
}

// ReleaseBody drops Body and returns its bytes to the memory pool
// (queued.max.request.bytes) before the response is sent. A handler
// calls it when it no longer needs the raw bytes, as Kafka's
// KafkaRequestHandler releases the request buffer once handle returns,
// whether or not the response is ready: a request parked for later (a
// Fetch waiting for data, a JoinGroup waiting for its group) then holds
// only its decoded fields, and parked requests cannot hold the pool
// against every other connection. Without it the bytes return when the
// response is written, skipped or abandoned. Calling it twice is
// harmless.
func (r *Request) ReleaseBody() {
	r.Body = nil
	if r.release != nil {
		r.release()
	}
}

// Part is one piece of a response body: exactly one of Bytes and Region is
// set. A Fetch response interleaves encoded bytes with file regions, the way
// Kafka's SendBuilder interleaves ByteBufferSends with FileRecords sends.
type Part struct {
	Bytes  []byte
	Region *pagecache.Region // sent with sendfile; net copies the value and never mutates the caller's
}

// Response is a handler's answer to one request. The handler writes only the
// response body: net writes the size prefix and the response header
// (correlation id, and the empty tagged-field section of header v1 for
// flexible versions other than ApiVersions).
type Response struct {
	Parts []Part

	// Close closes the connection after sending Parts (or instead of
	// sending, when Parts is empty), as Kafka's CloseConnectionResponse.
	Close bool

	// NoResponse sends nothing and unmutes the connection, as Kafka's
	// NoOpResponse for an acks=0 Produce. Close takes precedence.
	NoResponse bool

	// Throttle keeps the connection muted (not read) for this long once
	// the response has been written or skipped, as Kafka mutes a throttled
	// client's channel after answering it at once with throttle_time_ms
	// (KIP-219). Zero unmutes at once.
	Throttle time.Duration

	// Done, if set, is called once when the response has been handed
	// entirely to the kernel (err nil) or abandoned (ErrConnClosed,
	// ErrServerClosed, or the write error). Regions' files must stay open
	// until then. It runs on a network goroutine: it must not block.
	Done func(err error)
}

// Handler serves requests. Serve may return before answering (a long-poll
// Fetch or an acks=all Produce completes later): respond must be called
// exactly once per request, from any goroutine; later calls are ignored.
// The connection reads no further request until respond has been called and
// the response written (Kafka's one request in flight per connection).
type Handler interface {
	Serve(req *Request, respond func(Response))
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(req *Request, respond func(Response))

// Serve calls f.
func (f HandlerFunc) Serve(req *Request, respond func(Response)) { f(req, respond) }

// size returns the number of body bytes in r.
func (r *Response) size() int64 {
	var n int64
	for _, p := range r.Parts {
		if p.Region != nil {
			n += p.Region.Len
		} else {
			n += int64(len(p.Bytes))
		}
	}
	return n
}

// done calls r.Done if set.
func (r *Response) done(err error) {
	if r.Done != nil {
		r.Done(err)
	}
}
