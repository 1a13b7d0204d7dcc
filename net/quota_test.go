package net

import (
	"errors"
	stdnet "net"
	"testing"
	"time"
)

// dialServed dials and checks that the connection is served.
func dialServed(t *testing.T, s *started, corr int32) stdnet.Conn {
	t.Helper()
	c := s.dial(t)
	send(t, c, produceV3(corr), nil)
	if got, _ := readResponse(t, c, false); got != corr {
		t.Fatalf("correlation %d, want %d", got, corr)
	}
	return c
}

// Kafka: ConnectionQuotas closes a connection from an address that already
// has max.connections.per.ip open (TooManyConnectionsException), and
// counts it again once one of them closes.
func TestMaxConnectionsPerIP(t *testing.T) {
	forEachDesign(t, func(t *testing.T, d design) {
		s := start(t, d, Config{MaxConnectionsPerIP: 2}, echo)
		c1 := dialServed(t, s, 1)
		dialServed(t, s, 2)
		expectClosed(t, s.dial(t))
		if n := s.srv.Stats().ConnectionsRejectedPerIP; n != 1 {
			t.Errorf("ConnectionsRejectedPerIP = %d, want 1", n)
		}
		c1.Close()
		eventually(t, "the closed connection to be forgotten", func() bool { return s.srv.Stats().Connections == 1 })
		dialServed(t, s, 3)
	})
}

// Kafka: max.connections.per.ip.overrides ("host:count,...") replaces the
// limit for the addresses it names; with max.connections.per.ip=0 only
// the overridden addresses may connect.
func TestMaxConnectionsPerIPOverrides(t *testing.T) {
	forEachDesign(t, func(t *testing.T, d design) {
		s := start(t, d, Config{MaxConnectionsPerIP: 1, MaxConnectionsPerIPOverrides: map[string]int{"127.0.0.1": 3}}, echo)
		for i := range 3 {
			dialServed(t, s, int32(i))
		}
		expectClosed(t, s.dial(t))

		s = start(t, d, Config{MaxConnectionsPerIP: 5, MaxConnectionsPerIPOverrides: map[string]int{"localhost": 0}}, echo)
		expectClosed(t, s.dial(t))

		s = start(t, d, Config{MaxConnectionsPerIP: NoConnectionsPerIP, MaxConnectionsPerIPOverrides: map[string]int{"127.0.0.1": 1}}, echo)
		dialServed(t, s, 1)
		expectClosed(t, s.dial(t))
	})
}

// Kafka: max.connections.per.ip may be 0 only with overrides; counts must
// not be negative; a host that does not resolve is a configuration error.
func TestConnectionQuotaConfig(t *testing.T) {
	bad := []Config{
		{MaxConnectionsPerIP: NoConnectionsPerIP},
		{MaxConnectionsPerIP: -2},
		{MaxConnectionsPerIPOverrides: map[string]int{"127.0.0.1": -1}},
		{MaxConnectionsPerIPOverrides: map[string]int{"": 1}},
		{MaxConnectionsPerIPOverrides: map[string]int{"no-such-host.invalid": 1}},
		{MaxConnectionCreationRate: -1},
		{ListenerMaxConnectionCreationRate: map[string]int{"127.0.0.1:9092": -1}},
	}
	for _, cfg := range bad {
		for _, d := range designs {
			_, err := d.new(cfg, echo)
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Errorf("%s %+v: err %v, want a ConfigError", d.name, cfg, err)
			}
		}
	}
}

// Kafka: KIP-612 max.connection.creation.rate throttles the acceptor
// (connections are delayed, not refused). K connections over a rate R with
// a burst of one second's worth take at least (K-R)/R seconds.
func TestMaxConnectionCreationRate(t *testing.T) {
	forEachDesign(t, func(t *testing.T, d design) {
		const rate, k = 20, 40
		for _, cfg := range []Config{
			{MaxConnectionCreationRate: rate},
			{ListenerMaxConnectionCreationRate: map[string]int{}}, // filled with the listener below
		} {
			s := startRated(t, d, cfg, rate)
			t0 := time.Now()
			for i := range k {
				dialServed(t, s, int32(i))
			}
			elapsed := time.Since(t0)
			want := time.Duration(float64(k-rate) / rate * float64(time.Second))
			if elapsed < want*8/10 {
				t.Errorf("%d connections at %d/s took %v, want at least %v", k, rate, elapsed, want)
			}
			if st := s.srv.Stats(); st.AcceptThrottles == 0 || st.AcceptThrottleTime <= 0 {
				t.Errorf("throttles %d time %v", st.AcceptThrottles, st.AcceptThrottleTime)
			}
		}
	})
}

// startRated starts a server; a non-nil ListenerMaxConnectionCreationRate
// gets rate for the listener's address, which is known only once it
// listens.
func startRated(t *testing.T, d design, cfg Config, rate int) *started {
	t.Helper()
	if cfg.ListenerMaxConnectionCreationRate == nil {
		return start(t, d, cfg, echo)
	}
	ln, err := stdnet.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg.ListenerMaxConnectionCreationRate = map[string]int{ln.Addr().String(): rate}
	srv, err := d.new(cfg, echo)
	if err != nil {
		t.Fatal(err)
	}
	s := &started{srv: srv, addr: ln.Addr().String(), served: make(chan error, 1)}
	go func() { s.served <- srv.Serve(ln) }()
	t.Cleanup(func() { s.stop(t) })
	return s
}

// The token bucket grants a burst of one second's worth, then one token per
// 1/rate, and an unlimited bucket never waits.
func TestTokenBucket(t *testing.T) {
	b := newTokenBucket(10)
	now := time.Unix(1000, 0)
	for i := range 10 {
		if d := b.reserve(now); d != 0 {
			t.Fatalf("burst token %d waits %v", i, d)
		}
	}
	if d := b.reserve(now); d != 100*time.Millisecond {
		t.Fatalf("11th token waits %v, want 100ms", d)
	}
	if d := b.reserve(now.Add(100 * time.Millisecond)); d != 100*time.Millisecond {
		t.Fatalf("12th token waits %v, want 100ms", d)
	}
	var unlimited *tokenBucket = newTokenBucket(0)
	if d := unlimited.reserve(now); d != 0 {
		t.Fatalf("unlimited bucket waits %v", d)
	}
}
