package cluster

import (
	"time"

	"context"
	"fmt"
	"log/slog"
	stdnet "net"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/config"
	vnet "github.com/varve/varve/net"
	"github.com/varve/varve/quorum"
)

// Security between the nodes of a cluster. The controller listener (the
// first of controller.listener.names; on a broker-only node, its
// varve.quorum.learner.listener, which the controllers dial as they dial
// each other) serves the protocol listener.security.protocol.map gives
// it: TLS with the listener's settings, and on a SASL listener the same
// SaslHandshake and SaslAuthenticate exchange as a broker listener
// before any raft message or controller request (sasl.go's stages; a
// request out of stage closes the connection). The raft transport and
// the controller client dial it with this node's settings for that
// listener and sasl.mechanism.controller.protocol; the follower fetchers
// dial the leader's inter.broker.listener.name endpoint with this
// node's settings for that listener and
// sasl.mechanism.inter.broker.protocol (security_peer.go).

// quorumSecurity builds the controller listener's server side and the
// client sides of this node's connections to other nodes.
func (s *security) quorumSecurity(cfg *config.Broker, log *slog.Logger) error {
	if len(cfg.ControllerListenerNames) == 0 {
		return nil // config refuses a cluster without one
	}
	name := cfg.ControllerListenerNames[0]
	ls := s.byName[name]
	if ls == nil { // a broker-only node listens for the log on its learner listener
		var err error
		if ls, err = newListenerSecurity(cfg, config.Listener{Name: name}, log); err != nil {
			return fmt.Errorf("controller listener %s (varve.quorum.learner.listener) uses security protocol %s: %w", name, ls.protocol, err)
		}
	}
	s.mapsPrincipals(ls)
	s.controller = ls
	var err error
	clientID := fmt.Sprintf("varve-controller-client-%d", cfg.NodeID)
	if s.toQuorum, err = newPeerSecurity(cfg, name, "sasl.mechanism.controller.protocol", clientID, log); err != nil {
		return err
	}
	if cfg.HasRole("broker") && cfg.InterBrokerListenerName != "" {
		s.toBrokers, err = newPeerSecurity(cfg, cfg.InterBrokerListenerName, "sasl.mechanism.inter.broker.protocol", "varve-replica-fetcher", log)
	}
	return err
}

// secureQuorum makes the quorum's listener serve, and its connections
// dial, as the controller listener's security says.
func (b *Broker) secureQuorum(qc *quorum.Config) {
	ls := b.sec.controller
	if ls == nil {
		return
	}
	qc.TLS = ls.tls
	if p := b.sec.toQuorum; p.tls != nil || p.sasl != nil {
		qc.Secure = func(ctx context.Context, conn stdnet.Conn, addr string) (stdnet.Conn, error) {
			return p.secure(ctx, conn, addr)
		}
	}
	if ls.sasl != nil {
		qc.Authenticate = b.authenticateQuorum(ls)
	}
}

// authenticateQuorum is the controller listener's SASL gate: before
// authentication only ApiVersions (answered by the quorum),
// SaslHandshake and SaslAuthenticate (answered here, as on a broker
// listener) pass; anything else closes the connection.
func (b *Broker) authenticateQuorum(ls *listenerSecurity) func(*vnet.Request, func(vnet.Response)) bool {
	return func(r *vnet.Request, respond func(vnet.Response)) bool {
		// The listener's address is known once it serves: record it on
		// the first request, so the SASL handlers find its settings.
		b.sec.byAddr.LoadOrStore(r.Conn.Listener, ls)
		if ok, _ := sessionOf(r).admit(r.Key, r.Version, time.Now()); !ok {
			b.log.Debug("request before SASL authentication on the controller listener", "key", r.Key, "client", r.Conn.Remote)
			respond(vnet.Response{Close: true})
			return true
		}
		if r.Key == kmsg.SASLHandshake.Int16() || r.Key == kmsg.SASLAuthenticate.Int16() {
			b.Serve(r, respond)
			return true
		}
		return false
	}
}
