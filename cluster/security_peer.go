package cluster

// Connections this node opens to other nodes: the follower fetchers to
// a leader's inter-broker listener (inter.broker.listener.name), and
// the controller client and the raft transport to the controllers'
// listener (the first of controller.listener.names). Each is secured as
// the listener it dials says, with this node's own settings for that
// listener, as Kafka's broker builds the client side of its
// inter-broker and controller channels:
//
//   - SSL, SASL_SSL: TLS with the listener's key store as the client
//     certificate (when one is configured) and its trust store as the
//     roots; ssl.endpoint.identification.algorithm=https (the default)
//     checks the server's certificate names the host dialed, empty skips
//     that check but still verifies the chain.
//   - SASL_PLAINTEXT, SASL_SSL: SaslHandshake v1 and SaslAuthenticate v2
//     with sasl.mechanism.inter.broker.protocol (or, to the controllers,
//     sasl.mechanism.controller.protocol), PLAIN or SCRAM, as the
//     username and password options of the listener's JAAS
//     configuration for that mechanism, the half of it Kafka's client
//     side reads (listener.name.<l>.<mechanism>.sasl.jaas.config).
//
// A peerSecurity is built at start-up and only read afterwards; secure
// is safe for concurrent use.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	stdnet "net"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/xdg-go/scram"

	"github.com/varve/varve/config"
)

// peerSecurity is how this node secures the connections it opens to one
// listener of the other nodes.
type peerSecurity struct {
	listener string
	protocol string
	tls      *tlsClient // SSL, SASL_SSL; nil otherwise
	sasl     *saslClient
	clientID string
}

// saslClient is the client half of one SASL mechanism.
type saslClient struct {
	mechanism      string
	user, password string
}

// newPeerSecurity reads the client side of listener's security;
// mechanismProp names the property that picks its SASL mechanism.
func newPeerSecurity(cfg *config.Broker, listener, mechanismProp, clientID string, log *slog.Logger) (*peerSecurity, error) {
	sec := cfg.Security(listener)
	p := &peerSecurity{listener: listener, protocol: sec.Protocol, clientID: clientID}
	var err error
	if sec.Protocol == "SSL" || sec.Protocol == "SASL_SSL" {
		if p.tls, err = newTLSClient(sec, log); err != nil {
			return nil, fmt.Errorf("connections to listener %s (%s): %w", listener, sec.Protocol, err)
		}
	}
	if sec.Protocol == "SASL_PLAINTEXT" || sec.Protocol == "SASL_SSL" {
		mech, _ := cfg.Get(mechanismProp)
		if p.sasl, err = newSaslClient(mech, sec.JAAS[mech]); err != nil {
			return nil, fmt.Errorf("connections to listener %s (%s, %s=%s): %w", listener, sec.Protocol, mechanismProp, mech, err)
		}
	}
	return p, nil
}

// newSaslClient reads the username and password of mech's JAAS
// configuration.
func newSaslClient(mech, jaas string) (*saslClient, error) {
	if mech != "PLAIN" && mech != "SCRAM-SHA-256" && mech != "SCRAM-SHA-512" {
		return nil, errors.New("Varve's nodes authenticate to each other with PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
	}
	prop := "listener.name.<listener>." + strings.ToLower(mech) + ".sasl.jaas.config"
	if jaas == "" {
		return nil, fmt.Errorf("no credentials for this node: set username and password in %s", prop)
	}
	e, err := parseJAAS(jaas)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", prop, err)
	}
	user, okU := e.options["username"]
	pw, okP := e.options["password"]
	if !okU || !okP || user == "" {
		return nil, fmt.Errorf("%s: this node's username and password options are missing", prop)
	}
	return &saslClient{mechanism: mech, user: user, password: pw}, nil
}

// secure turns a connection dialed to addr into one the listener
// admits: TLS, then SASL, as the listener's protocol says. It closes
// conn when it fails. ctx bounds the handshakes.
func (p *peerSecurity) secure(ctx context.Context, conn stdnet.Conn, addr string) (stdnet.Conn, error) {
	if p == nil || p.tls == nil && p.sasl == nil {
		return conn, nil
	}
	if d, ok := ctx.Deadline(); ok {
		conn.SetDeadline(d)
		defer conn.SetDeadline(time.Time{})
	}
	out := conn
	if p.tls != nil {
		tc := tls.Client(conn, p.tls.config(addr))
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, fmt.Errorf("TLS handshake with %s (listener %s): %w", addr, p.listener, err)
		}
		out = tc
	}
	if p.sasl != nil {
		if err := p.sasl.authenticate(out, p.clientID); err != nil {
			out.Close()
			return nil, fmt.Errorf("SASL %s with %s (listener %s): %w", p.sasl.mechanism, addr, p.listener, err)
		}
	}
	return out, nil
}

// tlsClient is the client side of a listener's TLS settings: this
// node's key store as its certificate, if it has one, and its trust
// store, both reloaded when their files change (security_reload.go).
type tlsClient struct {
	store      *tlsStore
	verifyHost bool
}

func newTLSClient(s config.ListenerSecurity, log *slog.Logger) (*tlsClient, error) {
	c := &tlsClient{}
	switch strings.ToLower(s.EndpointIdentificationAlgorithm) {
	case "https":
		c.verifyHost = true
	case "":
	default:
		return nil, fmt.Errorf("ssl.endpoint.identification.algorithm=%s: Kafka knows https, or empty to skip the check", s.EndpointIdentificationAlgorithm)
	}
	base, err := tlsBase(s)
	if err != nil {
		return nil, err
	}
	if c.store, err = newTLSStore(s, base, false, log); err != nil {
		return nil, err
	}
	return c, nil
}

// config is the configuration of one handshake with addr, with the
// store's current certificates.
func (c *tlsClient) config(addr string) *tls.Config {
	m := c.store.current()
	cfg := c.store.base.Clone()
	if m.cert != nil {
		cfg.Certificates = []tls.Certificate{*m.cert}
	}
	cfg.RootCAs = m.roots
	host, _, err := stdnet.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	cfg.ServerName = host
	if !c.verifyHost {
		// The chain is still verified, without the host name.
		cfg.InsecureSkipVerify = true
		cfg.VerifyConnection = func(cs tls.ConnectionState) error { return verifyChain(cs, m.roots) }
	}
	return cfg
}

// verifyChain checks the server's certificate chains to roots (the
// system's when nil), whatever names it holds.
func verifyChain(cs tls.ConnectionState, roots *x509.CertPool) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("the server sent no certificate")
	}
	opts := x509.VerifyOptions{Roots: roots, Intermediates: x509.NewCertPool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	for _, ic := range cs.PeerCertificates[1:] {
		opts.Intermediates.AddCert(ic)
	}
	_, err := cs.PeerCertificates[0].Verify(opts)
	return err
}

// authenticate runs the mechanism's exchange on conn, as Kafka's
// SaslClientAuthenticator: SaslHandshake v1, then SaslAuthenticate v2
// carrying the mechanism's tokens.
func (s *saslClient) authenticate(conn stdnet.Conn, clientID string) error {
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.SetVersion(1)
	hs.Mechanism = s.mechanism
	resp, err := peerRoundTrip(conn, 1, hs, clientID)
	if err != nil {
		return err
	}
	if err := kerr.ErrorForCode(resp.(*kmsg.SASLHandshakeResponse).ErrorCode); err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	if s.mechanism == "PLAIN" {
		_, err := s.step(conn, 2, []byte("\x00"+s.user+"\x00"+s.password), clientID)
		return err
	}
	return s.scram(conn, clientID)
}

// scram runs SCRAM's client-first, client-final exchange (RFC 5802)
// and checks the server's signature.
func (s *saslClient) scram(conn stdnet.Conn, clientID string) error {
	hash := scram.SHA256
	if s.mechanism == "SCRAM-SHA-512" {
		hash = scram.SHA512
	}
	cl, err := hash.NewClient(s.user, s.password, "")
	if err != nil {
		return err
	}
	conv := cl.NewConversation()
	msg, err := conv.Step("")
	for corr := int32(2); err == nil && !conv.Done(); corr++ {
		var answer []byte
		if answer, err = s.step(conn, corr, []byte(msg), clientID); err == nil {
			msg, err = conv.Step(string(answer))
		}
	}
	if err == nil && !conv.Valid() {
		err = errors.New("the server's SCRAM signature does not verify")
	}
	return err
}

// step sends one SaslAuthenticate token and returns the server's.
func (s *saslClient) step(conn stdnet.Conn, corr int32, token []byte, clientID string) ([]byte, error) {
	req := kmsg.NewPtrSASLAuthenticateRequest()
	req.SetVersion(2)
	req.SASLAuthBytes = token
	resp, err := peerRoundTrip(conn, corr, req, clientID)
	if err != nil {
		return nil, err
	}
	r := resp.(*kmsg.SASLAuthenticateResponse)
	if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
		return nil, fmt.Errorf("authenticate: %w", err)
	}
	return r.SASLAuthBytes, nil
}

// maxSaslResponse bounds a SASL response, read before it is allocated.
const maxSaslResponse = 1 << 20

// peerRoundTrip writes req and reads its response.
func peerRoundTrip(conn stdnet.Conn, corr int32, req kmsg.Request, clientID string) (kmsg.Response, error) {
	buf := kmsg.NewRequestFormatter(kmsg.FormatterClientID(clientID)).AppendRequest(nil, req, corr)
	if _, err := conn.Write(buf); err != nil {
		return nil, err
	}
	var size [4]byte
	if _, err := io.ReadFull(conn, size[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(size[:]))
	if n < 4 || n > maxSaslResponse {
		return nil, fmt.Errorf("%w: response of %d bytes", kerr.CorruptMessage, n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(conn, body); err != nil {
		return nil, err
	}
	rd := kbin.Reader{Src: body}
	if got := rd.Int32(); got != corr {
		return nil, fmt.Errorf("response for correlation id %d, want %d", got, corr)
	}
	if req.IsFlexible() {
		skipTags(&rd)
	}
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	return resp, resp.ReadFrom(rd.Src)
}
