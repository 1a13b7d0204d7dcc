package net

import (
	"fmt"
	"log/slog"
	"math"
	"time"
)

// Kafka's defaults for the properties in Config (SocketServerConfigs,
// ServerConfigs).
const (
	DefaultNumNetworkThreads        = 3
	DefaultNumIOThreads             = 8
	DefaultQueuedMaxRequests        = 500
	DefaultSocketRequestMaxBytes    = 104857600 // 100 MiB
	DefaultConnectionsMaxIdle       = 600000 * time.Millisecond
	DefaultSocketSendBufferBytes    = 102400
	DefaultSocketReceiveBufferBytes = 102400
)

// NoConnectionsPerIP as Config.MaxConnectionsPerIP is Kafka's
// max.connections.per.ip=0: no connection from an address without an
// override in MaxConnectionsPerIPOverrides.
const NoConnectionsPerIP = -1

// pollTimeout bounds one epoll_wait, as Kafka's Processor polls with 300 ms.
const pollTimeout = 300 * time.Millisecond

// Config holds the network settings, named after Kafka's broker properties.
// A zero field takes Kafka's default; see each field for the meaning of a
// negative value.
type Config struct {
	// NumNetworkThreads is Kafka's num.network.threads: the number of
	// processors (each with its own epoll instance) per listener. Default 3.
	NumNetworkThreads int

	// NumIOThreads is Kafka's num.io.threads: the number of handler
	// goroutines taking requests from the request channel. Default 8.
	NumIOThreads int

	// QueuedMaxRequests is Kafka's queued.max.requests: the capacity of the
	// request channel between processors and handlers. When it is full,
	// processors stop reading from their connections. Default 500.
	QueuedMaxRequests int

	// SocketRequestMaxBytes is Kafka's socket.request.max.bytes: the largest
	// size prefix accepted. A larger or negative one closes the connection
	// before any buffer is allocated. Default 104857600.
	SocketRequestMaxBytes int32

	// ConnectionsMaxIdle is Kafka's connections.max.idle.ms: a connection
	// with no request in flight and no traffic for this long is closed.
	// Default 600000 ms; negative disables idle expiry.
	ConnectionsMaxIdle time.Duration

	// SocketSendBufferBytes is Kafka's socket.send.buffer.bytes: SO_SNDBUF of
	// accepted connections. Default 102400; -1 keeps the OS default (and
	// with it Linux's buffer autotuning).
	SocketSendBufferBytes int

	// SocketReceiveBufferBytes is Kafka's socket.receive.buffer.bytes:
	// SO_RCVBUF of accepted connections. Default 102400; -1 keeps the OS
	// default.
	SocketReceiveBufferBytes int

	// MaxConnections is Kafka's max.connections: accepted connections above
	// it are closed at once. Default (0) is unlimited, as Kafka's Int.MaxValue.
	MaxConnections int

	// QueuedMaxRequestBytes is Kafka's queued.max.request.bytes: the bytes
	// of requests being read or served that the memory pool grants in all.
	// A connection whose request does not fit is not read until memory is
	// released. Zero or negative (Kafka's -1, unbounded): derived from the
	// process's memory, see DefaultQueuedMaxRequestBytes. Otherwise at
	// least SocketRequestMaxBytes.
	QueuedMaxRequestBytes int64

	// MaxConnectionsPerIP is Kafka's max.connections.per.ip: connections
	// from one address above it are closed at once. Default (0) is
	// unlimited, as Kafka's Int.MaxValue; NoConnectionsPerIP is Kafka's 0.
	MaxConnectionsPerIP int

	// MaxConnectionsPerIPOverrides is Kafka's
	// max.connections.per.ip.overrides, parsed: a limit per IP address or
	// host name (resolved when the server is created).
	MaxConnectionsPerIPOverrides map[string]int

	// MaxConnectionCreationRate is Kafka's max.connection.creation.rate
	// (KIP-612): new connections per second on all listeners together.
	// The acceptor waits before taking a connection over the rate. Default
	// (0) is unlimited, as Kafka's Int.MaxValue.
	MaxConnectionCreationRate int

	// ListenerMaxConnectionCreationRate is Kafka's
	// listener.name.<listener>.max.connection.creation.rate (KIP-612), by
	// listener address as given to Serve (ln.Addr().String()).
	ListenerMaxConnectionCreationRate map[string]int

	// Logger receives the network layer's logs (connections refused by a
	// quota, at debug level). Nil: slog.Default().
	Logger *slog.Logger

	// InlineHandlers (not a Kafka setting; GoroutineServer only) serves
	// each request on its connection's goroutine instead of handing it to
	// the NumIOThreads handlers: two goroutine hand-offs fewer per request,
	// which is most of the latency of one request at a time; the request
	// channel's bound (QueuedMaxRequests) then does not apply.
	InlineHandlers bool
}

// DefaultConfig returns Kafka's defaults.
func DefaultConfig() Config {
	return Config{}.withDefaults()
}

// withDefaults fills zero fields with Kafka's defaults.
func (c Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.NumNetworkThreads, DefaultNumNetworkThreads)
	def(&c.NumIOThreads, DefaultNumIOThreads)
	def(&c.QueuedMaxRequests, DefaultQueuedMaxRequests)
	def(&c.SocketSendBufferBytes, DefaultSocketSendBufferBytes)
	def(&c.SocketReceiveBufferBytes, DefaultSocketReceiveBufferBytes)
	if c.SocketRequestMaxBytes == 0 {
		c.SocketRequestMaxBytes = DefaultSocketRequestMaxBytes
	}
	if c.ConnectionsMaxIdle == 0 {
		c.ConnectionsMaxIdle = DefaultConnectionsMaxIdle
	}
	if c.QueuedMaxRequestBytes <= 0 {
		c.QueuedMaxRequestBytes = DefaultQueuedMaxRequestBytes(c.SocketRequestMaxBytes)
	}
	if c.MaxConnectionsPerIP >= math.MaxInt32 {
		c.MaxConnectionsPerIP = 0 // Kafka's Int.MaxValue: no limit
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.MaxConnectionCreationRate >= math.MaxInt32 {
		c.MaxConnectionCreationRate = 0
	}
	return c
}

// validate reports the first property whose value cannot work. It expects
// defaults to have been applied.
func (c Config) validate() error {
	positive := []struct {
		prop string
		v    int
	}{
		{"num.network.threads", c.NumNetworkThreads},
		{"num.io.threads", c.NumIOThreads},
		{"queued.max.requests", c.QueuedMaxRequests},
		{"socket.request.max.bytes", int(c.SocketRequestMaxBytes)},
	}
	for _, p := range positive {
		if p.v < 1 {
			return &ConfigError{Property: p.prop, Value: p.v, Reason: "must be at least 1"}
		}
	}
	if c.SocketSendBufferBytes < -1 {
		return &ConfigError{Property: "socket.send.buffer.bytes", Value: c.SocketSendBufferBytes, Reason: "must be -1 or positive"}
	}
	if c.SocketReceiveBufferBytes < -1 {
		return &ConfigError{Property: "socket.receive.buffer.bytes", Value: c.SocketReceiveBufferBytes, Reason: "must be -1 or positive"}
	}
	if c.MaxConnections < 0 {
		return &ConfigError{Property: "max.connections", Value: c.MaxConnections, Reason: "must not be negative"}
	}
	if c.QueuedMaxRequestBytes < int64(c.SocketRequestMaxBytes) {
		return &ConfigError{Property: "queued.max.request.bytes", Value: c.QueuedMaxRequestBytes, Reason: "must be -1 or at least socket.request.max.bytes"}
	}
	return c.validateConnectionQuotas()
}

// validateConnectionQuotas checks the per-IP limits and creation rates.
func (c Config) validateConnectionQuotas() error {
	switch {
	case c.MaxConnectionsPerIP < NoConnectionsPerIP:
		return &ConfigError{Property: "max.connections.per.ip", Value: c.MaxConnectionsPerIP, Reason: "must not be negative"}
	case c.MaxConnectionsPerIP == NoConnectionsPerIP && len(c.MaxConnectionsPerIPOverrides) == 0:
		// Kafka: KafkaConfig requires overrides for a zero per-IP limit.
		return &ConfigError{Property: "max.connections.per.ip", Value: 0, Reason: "can be set to zero only if max.connections.per.ip.overrides is set"}
	case c.MaxConnectionCreationRate < 0:
		return &ConfigError{Property: "max.connection.creation.rate", Value: c.MaxConnectionCreationRate, Reason: "must not be negative"}
	}
	for host, n := range c.MaxConnectionsPerIPOverrides {
		if n < 0 || host == "" {
			return &ConfigError{Property: "max.connections.per.ip.overrides", Value: fmt.Sprintf("%s:%d", host, n), Reason: "expected host:count with a count of at least 0"}
		}
	}
	for l, n := range c.ListenerMaxConnectionCreationRate {
		if n < 0 {
			return &ConfigError{Property: "listener.name." + l + ".max.connection.creation.rate", Value: n, Reason: "must not be negative"}
		}
	}
	return nil
}
