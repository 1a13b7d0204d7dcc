package net

import (
	"crypto/tls"
	"sync/atomic"
)

// ConnState is one value a Handler keeps per connection: the server
// creates it empty when it accepts the connection and forgets it when
// the connection closes. net never looks inside; the broker keeps a
// connection's authentication there (who the client is, how far its SASL
// exchange has gone). Load and Store may be called from any goroutine.
type ConnState struct {
	v atomic.Pointer[any]
}

// Load returns the value last stored, or nil.
func (s *ConnState) Load() any {
	if p := s.v.Load(); p != nil {
		return *p
	}
	return nil
}

// Store replaces the value.
func (s *ConnState) Store(v any) { s.v.Store(&v) }

// tlsState returns the handshake's result once it has completed (a first
// request has been read through the TLS connection), else nil.
func tlsState(c *tls.Conn) *tls.ConnectionState {
	cs := c.ConnectionState()
	if !cs.HandshakeComplete {
		return nil
	}
	return &cs
}
