package cluster

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/asn1"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/varve/varve/config"
	vnet "github.com/varve/varve/net"
)

// Security on the broker's listeners, as Kafka's ChannelBuilders set it
// up per listener from listener.security.protocol.map:
//
//   - PLAINTEXT: served by the configured network model.
//   - SSL: TLS (security_tls.go), served by a goroutine-per-connection
//     server (net.GoroutineServer.ServeTLS: crypto/tls cannot run inside
//     the Reactor's epoll loop, see net's doc). The principal is the
//     client certificate's subject DN, User:ANONYMOUS without one.
//   - SASL_PLAINTEXT, SASL_SSL: the same transports, then SaslHandshake
//     and SaslAuthenticate (sasl.go) before any other request; the
//     principal is the authenticated user.
//
// The controller listener and the inter-broker listener take the same
// protocols, and this node's own connections to them (replica
// fetchers, the controller client, the raft transport) are secured as
// they say (security_peer.go, security_quorum.go).
//
// What is not built stops start-up with a message naming it, rather than
// serving unencrypted, unauthenticated Kafka on a port configured for
// more: GSSAPI, OAUTHBEARER without a way to validate tokens, a JKS or
// PKCS#12 key store, encrypted keys.

// anonymous is Kafka's KafkaPrincipal.ANONYMOUS.
const anonymous = "User:ANONYMOUS"

// listenerSecurity is what one broker listener asks of its connections.
// It is built at start-up and only read afterwards.
type listenerSecurity struct {
	name     string
	protocol string
	tls      *tls.Config // SSL, SASL_SSL; nil otherwise
	store    *tlsStore   // tls's key store and trust store
	sasl     *saslConfig // SASL_PLAINTEXT, SASL_SSL; nil otherwise
}

// security holds every broker listener's security, by name and (once
// listening) by address, as requests name their listener by address.
type security struct {
	byName    map[string]*listenerSecurity
	byAddr    sync.Map // string (vnet.ConnInfo.Listener) -> *listenerSecurity
	failDelay time.Duration
	maxReauth time.Duration // connections.max.reauth.ms; 0: sessions never end (KIP-368)

	reauths       atomic.Int64 // successful re-authentications (Kafka: successful-reauthentication-total)
	expiredClosed atomic.Int64 // connections closed for an expired session (Kafka: expired-connections-killed-count)

	// rules map a TLS client's subject DN to its principal's name
	// (ssl.principal.mapping.rules); nil is DEFAULT.
	rules *config.PrincipalRules

	// In a cluster (security_quorum.go): the controller listener's
	// server side, on this node's controller or learner listener, and
	// the client sides of the connections this node opens.
	controller *listenerSecurity
	toBrokers  *peerSecurity // inter.broker.listener.name
	toQuorum   *peerSecurity // controller.listener.names' first
}

// newSecurity builds each broker listener's security, or says what
// stops this node from serving a listener as configured.
func newSecurity(cfg *config.Broker, log *slog.Logger) (*security, error) {
	s := &security{byName: map[string]*listenerSecurity{}, failDelay: cfg.ConnectionFailedAuthenticationDelayMs.Duration(),
		maxReauth: cfg.ConnectionsMaxReauthMs.Duration()}
	rules, _ := cfg.Get("ssl.principal.mapping.rules")
	var err error
	if s.rules, err = config.ParsePrincipalRules(rules); err != nil {
		return nil, fmt.Errorf("ssl.principal.mapping.rules: %w", err) // config checked it
	}
	for _, l := range cfg.Listeners {
		ls, err := newListenerSecurity(cfg, l, log)
		if err != nil {
			return nil, fmt.Errorf("listener %s (%s) uses security protocol %s: %w", l.Name, l.Addr(), ls.protocol, err)
		}
		s.byName[l.Name] = ls
		s.mapsPrincipals(ls)
	}
	if inQuorum(cfg) {
		if err := s.quorumSecurity(cfg, log); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func newListenerSecurity(cfg *config.Broker, l config.Listener, log *slog.Logger) (*listenerSecurity, error) {
	sec := cfg.Security(l.Name)
	ls := &listenerSecurity{name: l.Name, protocol: sec.Protocol}
	if sec.Protocol == "PLAINTEXT" {
		return ls, nil
	}
	var err error
	if sec.Protocol == "SSL" || sec.Protocol == "SASL_SSL" {
		if ls.tls, ls.store, err = newTLSConfig(sec, log); err != nil {
			return ls, err
		}
	}
	if sec.Protocol == "SASL_PLAINTEXT" || sec.Protocol == "SASL_SSL" {
		if ls.sasl, err = newSaslConfig(sec); err != nil {
			return ls, err
		}
	}
	return ls, nil
}

// listening records the address a listener was bound to.
func (s *security) listening(name, addr string) {
	if ls := s.byName[name]; ls != nil {
		s.byAddr.Store(addr, ls)
	}
}

// of returns the security of the listener a request came on; nil for an
// address not recorded (a test's own listener), which is plaintext.
func (s *security) of(r *vnet.Request) *listenerSecurity {
	if v, ok := s.byAddr.Load(r.Conn.Listener); ok {
		return v.(*listenerSecurity)
	}
	return nil
}

// principal is the authenticated identity of a request's connection, in
// Kafka's form (User:name), for authorization: the SASL user on a SASL
// listener, the certificate's subject DN on an SSL listener, else
// User:ANONYMOUS.
func (s *security) principal(r *vnet.Request) string {
	if sess, _ := r.Conn.State.Load().(*saslSession); sess != nil {
		if p, ok := sess.authenticated(); ok {
			return p
		}
	}
	if ls := s.of(r); ls != nil && ls.sasl == nil && r.Conn.TLS != nil && len(r.Conn.TLS.PeerCertificates) > 0 {
		name, err := s.certPrincipal(r.Conn.TLS.PeerCertificates[0])
		if err != nil {
			return anonymous // the handshake refused it (mapsPrincipals)
		}
		return "User:" + name
	}
	return anonymous
}

// certPrincipal is the principal name of a client certificate: its
// subject DN mapped by ssl.principal.mapping.rules. Computed per call: a
// DN and a few regular expressions cost microseconds.
func (s *security) certPrincipal(cert *x509.Certificate) (string, error) {
	dn := subjectDN(cert)
	if s.rules == nil {
		return dn, nil
	}
	return s.rules.Map(dn)
}

// mapsPrincipals makes an SSL listener's handshake refuse a client
// certificate that no ssl.principal.mapping.rules rule maps, as Kafka's
// SslAuthenticator fails the authentication of such a client. On
// SASL_SSL the principal is the SASL user, and the rules play no part.
func (s *security) mapsPrincipals(ls *listenerSecurity) {
	if ls.tls == nil || ls.sasl != nil || s.rules == nil || s.rules.IsDefault() {
		return
	}
	ls.store.setVerify(func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return nil
		}
		_, err := s.certPrincipal(cs.PeerCertificates[0])
		return err
	})
}

// subjectDN renders a certificate's subject as Java's
// X500Principal.getName() does (RFC 2253), Kafka's principal under
// ssl.principal.mapping.rules=DEFAULT: the relative names in the
// certificate's order reversed, most specific first, joined by commas
// without spaces, multi-valued ones by "+"; the keywords RFC 2253 lists
// (CN, C, L, ST, O, OU, STREET, DC, UID), other types as dotted OIDs with
// "#" and the value's DER in hex; string values escaped per RFC 2253.
func subjectDN(cert *x509.Certificate) string {
	var rdns []rawRDNSET
	if rest, err := asn1.Unmarshal(cert.RawSubject, &rdns); err != nil || len(rest) > 0 {
		return cert.Subject.String()
	}
	var b strings.Builder
	for i := len(rdns) - 1; i >= 0; i-- {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		for j, atv := range rdns[i] {
			if j > 0 {
				b.WriteByte('+')
			}
			writeAttribute(&b, atv)
		}
	}
	return b.String()
}

// rawRDNSET is one relative distinguished name with its values' encodings
// kept, as "#hex" shows the value's DER exactly as the certificate holds it.
type rawRDNSET []rawAttribute // the SET suffix makes encoding/asn1 read a SET OF

type rawAttribute struct {
	Type  asn1.ObjectIdentifier
	Value asn1.RawValue
}

// rfc2253Keywords are the attribute types RFC 2253 (and so Java) names.
var rfc2253Keywords = map[string]string{
	"2.5.4.3": "CN", "2.5.4.6": "C", "2.5.4.7": "L", "2.5.4.8": "ST", "2.5.4.10": "O",
	"2.5.4.11": "OU", "2.5.4.9": "STREET", "0.9.2342.19200300.100.1.25": "DC", "0.9.2342.19200300.100.1.1": "UID",
}

func writeAttribute(b *strings.Builder, atv rawAttribute) {
	kw, named := rfc2253Keywords[atv.Type.String()]
	var str string
	_, err := asn1.UnmarshalWithParams(atv.Value.FullBytes, &str, "")
	if !named || err != nil {
		b.WriteString(atv.Type.String() + "=#" + hex.EncodeToString(atv.Value.FullBytes))
		return
	}
	b.WriteString(kw + "=")
	for i, r := range str {
		switch {
		case strings.ContainsRune(",+\"<>;\\", r),
			(r == ' ' || r == '#') && i == 0,
			r == ' ' && i == len(str)-1:
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
}
