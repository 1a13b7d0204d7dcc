package net

import (
	"context"
	"fmt"
	"math"
	stdnet "net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// connQuotas is the part of Kafka's ConnectionQuotas that counts
// connections per client address (max.connections.per.ip and its
// overrides), shared by every listener of a server. Connections without an
// IP address (Unix sockets) are not counted. Safe for concurrent use.
type connQuotas struct {
	overrides map[netip.Addr]int // resolved max.connections.per.ip.overrides
	// maxConns is max.connections (0: unlimited), which SetConnectionLimits
	// changes while the server runs.
	maxConns atomic.Int64

	mu     sync.Mutex
	perIP  int                // REQUIRES mu; 0: unlimited; NoConnectionsPerIP: none without an override
	counts map[netip.Addr]int // REQUIRES mu; every open connection with an IP, limited or not
}

// resolveTimeout bounds the lookup of a host name in the overrides.
const resolveTimeout = 5 * time.Second

// newConnQuotas resolves the overrides' host names, as Kafka does with
// InetAddress.getByName when the configuration is applied.
func newConnQuotas(cfg Config) (*connQuotas, error) {
	q := &connQuotas{perIP: cfg.MaxConnectionsPerIP, overrides: map[netip.Addr]int{}, counts: map[netip.Addr]int{}}
	q.maxConns.Store(int64(cfg.MaxConnections))
	for host, n := range cfg.MaxConnectionsPerIPOverrides {
		addrs, err := resolveHost(host)
		if err != nil {
			return nil, &ConfigError{Property: "max.connections.per.ip.overrides", Value: fmt.Sprintf("%s:%d", host, n), Reason: err.Error()}
		}
		for _, a := range addrs {
			q.overrides[a] = n
		}
	}
	return q, nil
}

// resolveHost returns host's addresses: host itself if it is an IP address.
func resolveHost(host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a.Unmap()}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), resolveTimeout)
	defer cancel()
	addrs, err := stdnet.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	for i := range addrs {
		addrs[i] = addrs[i].Unmap()
	}
	return addrs, nil
}

// setLimits changes max.connections and max.connections.per.ip (Kafka:
// ConnectionQuotas.updateMaxConnectionsPerIp and updateBrokerMaxConnections,
// dynamic broker configuration): new connections are checked against
// them; open ones stay.
func (q *connQuotas) setLimits(maxConns, perIP int) {
	q.maxConns.Store(int64(maxConns))
	q.mu.Lock()
	q.perIP = perIP
	q.mu.Unlock()
}

// overMax reports whether open connections reach max.connections.
func (q *connQuotas) overMax(open int64) bool {
	limit := q.maxConns.Load()
	return limit > 0 && open >= limit
}

// limit is the number of connections ip may have open; -1 is unlimited.
// REQUIRES q.mu.
func (q *connQuotas) limit(ip netip.Addr) int {
	if n, ok := q.overrides[ip]; ok {
		return n
	}
	switch q.perIP {
	case 0:
		return -1
	case NoConnectionsPerIP:
		return 0
	}
	return q.perIP
}

// inc counts a new connection from ip, unless ip is at its limit (then it
// returns false and counts nothing: Kafka's TooManyConnectionsException).
func (q *connQuotas) inc(ip netip.Addr) bool {
	if !ip.IsValid() {
		return true
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	// Counted even when unlimited: a limit set later applies to them.
	if lim := q.limit(ip); lim >= 0 && q.counts[ip] >= lim {
		return false
	}
	q.counts[ip]++
	return true
}

// dec forgets a connection that inc counted.
func (q *connQuotas) dec(ip netip.Addr) {
	if !ip.IsValid() {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.counts[ip]--; q.counts[ip] <= 0 {
		delete(q.counts, ip)
	}
}

// sockaddrIP is the IP address of an accepted peer (invalid for Unix
// sockets); IPv4-mapped IPv6 addresses count as their IPv4 address.
func sockaddrIP(sa unix.Sockaddr) netip.Addr {
	switch sa := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrFrom4(sa.Addr)
	case *unix.SockaddrInet6:
		return netip.AddrFrom16(sa.Addr).Unmap()
	}
	return netip.Addr{}
}

// remoteIP is the IP address of a connection's peer, invalid if it has none.
func remoteIP(nc stdnet.Conn) netip.Addr {
	if ta, ok := nc.RemoteAddr().(*stdnet.TCPAddr); ok {
		return ta.AddrPort().Addr().Unmap()
	}
	return netip.Addr{}
}

// tokenBucket limits a rate of events (connection creations, KIP-612): it
// holds up to burst tokens, refilled at rate per second; an event takes one
// token, and when none is left the caller waits for the time the next one
// needs. Kafka measures the rate over its quota windows and delays the
// acceptor by the time that brings the rate back under the bound; a bucket
// whose burst is one second of the rate behaves the same way. Safe for
// concurrent use; a nil bucket never limits.
type tokenBucket struct {
	rate  float64 // tokens per second
	burst float64

	mu     sync.Mutex
	tokens float64 // may go negative: tokens promised to waiting callers
	last   time.Time
}

// newTokenBucket returns a bucket for rate events per second, nil for an
// unlimited rate (0).
func newTokenBucket(rate int) *tokenBucket {
	if rate <= 0 {
		return nil
	}
	return &tokenBucket{rate: float64(rate), burst: float64(rate), tokens: float64(rate)}
}

// reserve takes a token and returns how long to wait before using it.
func (b *tokenBucket) reserve(now time.Time) time.Duration {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.last.IsZero() {
		b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	}
	b.last = now
	b.tokens--
	if b.tokens >= 0 {
		return 0
	}
	return time.Duration(-b.tokens / b.rate * float64(time.Second))
}

// throttle waits until the listener's and the broker's rates allow one
// more connection; it returns the time waited, and false if stop closed
// first.
func throttle(listener, broker *tokenBucket, stop <-chan struct{}) (time.Duration, bool) {
	now := time.Now()
	d := max(listener.reserve(now), broker.reserve(now))
	if d <= 0 {
		return 0, true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return d, true
	case <-stop:
		return d, false
	}
}

// normalLimits maps Kafka's values onto connQuotas': Int.MaxValue is
// unlimited (0), a per-IP 0 admits only the overrides.
func normalLimits(maxConns, perIP int) (int, int) {
	switch {
	case perIP >= math.MaxInt32:
		perIP = 0
	case perIP == 0:
		perIP = NoConnectionsPerIP
	}
	if maxConns >= math.MaxInt32 {
		maxConns = 0
	}
	return maxConns, perIP
}
