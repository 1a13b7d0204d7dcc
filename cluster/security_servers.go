package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	stdnet "net"

	"github.com/varve/varve/config"
	vnet "github.com/varve/varve/net"
)

// servers serves the broker's listeners: plaintext ones (PLAINTEXT,
// SASL_PLAINTEXT) on the configured network model, TLS ones (SSL,
// SASL_SSL) on a goroutine-per-connection server, since the Reactor
// cannot run crypto/tls (net's doc says why). With the goroutine model
// one server does both. Two servers keep two memory pools and count
// max.connections and max.connections.per.ip each for its own listeners.
type servers struct {
	plain server
	tls   *vnet.GoroutineServer // nil without a TLS listener
}

func newServers(cfg *config.Broker, h vnet.Handler, sec *security) (*servers, error) {
	plain, err := newServer(cfg, h)
	if err != nil {
		return nil, err
	}
	s := &servers{plain: plain}
	if !sec.anyTLS() {
		return s, nil
	}
	if g, ok := plain.(*vnet.GoroutineServer); ok {
		s.tls = g
		return s, nil
	}
	if s.tls, err = vnet.NewGoroutineServer(netConfig(cfg), h); err != nil {
		return nil, err
	}
	return s, nil
}

// Serve serves a plaintext listener.
func (s *servers) Serve(ln stdnet.Listener) error { return s.plain.Serve(ln) }

// ServeTLS serves a TLS listener.
func (s *servers) ServeTLS(ln stdnet.Listener, cfg *tls.Config) error { return s.tls.ServeTLS(ln, cfg) }

func (s *servers) Shutdown(ctx context.Context) error {
	err := s.plain.Shutdown(ctx)
	if s.separate() {
		err = errors.Join(err, s.tls.Shutdown(ctx))
	}
	return err
}

func (s *servers) Stats() vnet.Stats {
	st := s.plain.Stats()
	if s.separate() {
		st = st.Plus(s.tls.Stats())
	}
	return st
}

func (s *servers) separate() bool { return s.tls != nil && server(s.tls) != s.plain }

func (s *security) anyTLS() bool {
	for _, ls := range s.byName {
		if ls.tls != nil {
			return true
		}
	}
	return false
}

// serveListener serves one bound broker listener until shutdown.
func (b *Broker) serveListener(name string, ln stdnet.Listener) error {
	b.sec.listening(name, ln.Addr().String())
	if ls := b.sec.byName[name]; ls != nil && ls.tls != nil {
		return b.server.(*servers).ServeTLS(ln, ls.tls)
	}
	return b.server.Serve(ln)
}

// clientListener is the listener a request came on, whose endpoints
// Metadata, FindCoordinator and DescribeCluster answer with, as Kafka
// answers with the endpoints of the request's listener: a client on the
// SSL listener is sent to SSL endpoints. A request from elsewhere (a
// test's own listener) gets the first broker listener's.
func (b *Broker) clientListener(r *vnet.Request) string {
	if ls := b.sec.of(r); ls != nil {
		return ls.name
	}
	return b.listenerName()
}
