package cluster

import (
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	stdnet "net"
	"strings"
	"testing"
	"time"

	"github.com/varve/varve/config"
	"github.com/varve/varve/internal/testcert"
)

// tlsEcho serves TLS handshakes with a certificate for 127.0.0.1 and
// localhost signed by ca, and returns its address.
func tlsEcho(t *testing.T, ca *testcert.CA) string {
	t.Helper()
	leaf, err := ca.Server(pkix.Name{CommonName: "node"})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{leaf.TLS}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { c.(*tls.Conn).Handshake(); c.Close() }()
		}
	}()
	return ln.Addr().String()
}

// Kafka: ssl.endpoint.identification.algorithm=https (the default since
// Kafka 2.0, KIP-294) makes a client check that the server's certificate
// names the host it dialed; empty turns only that check off, the chain
// is still verified against the trust store.
func TestPeerTLSEndpointIdentification(t *testing.T) {
	ca, err := testcert.NewCA("peer CA")
	if err != nil {
		t.Fatal(err)
	}
	other, err := testcert.NewCA("other CA")
	if err != nil {
		t.Fatal(err)
	}
	addr := tlsEcho(t, ca)
	_, port, _ := stdnet.SplitHostPort(addr)
	for _, c := range []struct {
		algorithm, dialedAs string
		trust               *testcert.CA
		ok                  bool
	}{
		{"https", addr, ca, true},
		{"https", "node-2.example:" + port, ca, false}, // not a name in the certificate
		{"", "node-2.example:" + port, ca, true},
		{"", addr, other, false}, // an untrusted chain, whatever the algorithm
		{"https", addr, other, false},
	} {
		cl, err := newTLSClient(config.ListenerSecurity{TruststoreType: "PEM", TruststoreCertificates: string(c.trust.PEM),
			EnabledProtocols: []string{"TLSv1.2", "TLSv1.3"}, EndpointIdentificationAlgorithm: c.algorithm})
		if err != nil {
			t.Fatal(err)
		}
		p := &peerSecurity{listener: "SSL", tls: cl}
		conn, err := stdnet.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		sc, err := p.secure(ctx, conn, c.dialedAs)
		cancel()
		if (err == nil) != c.ok {
			t.Errorf("algorithm %q, dialed as %s, trusting %v: err %v, want ok=%v", c.algorithm, c.dialedAs, c.trust == ca, err, c.ok)
		}
		if sc != nil {
			sc.Close()
		}
	}
}

// The client half of a JAAS configuration is its username and password
// options; a node without them, or asked for a mechanism it cannot
// speak, does not start.
func TestPeerSaslClientConfig(t *testing.T) {
	const plain = `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="s3cr3t" user_admin="s3cr3t";`
	c, err := newSaslClient("PLAIN", plain)
	if err != nil || c.user != "admin" || c.password != "s3cr3t" {
		t.Fatalf("got %+v, %v", c, err)
	}
	for _, bad := range []struct{ mech, jaas, want string }{
		{"GSSAPI", plain, "PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512"},
		{"PLAIN", "", "no credentials"},
		{"PLAIN", `org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="s3cr3t";`, "username and password options are missing"},
		{"SCRAM-SHA-256", `x required username="a" password=;`, "sasl.jaas.config"},
	} {
		_, err := newSaslClient(bad.mech, bad.jaas)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s %q: err %v, want %q", bad.mech, bad.jaas, err, bad.want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("the error shows a password: %v", err)
		}
	}
}
