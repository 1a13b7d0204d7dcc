package cluster

import (
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	"log/slog"
	stdnet "net"
	"os"
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
			EnabledProtocols: []string{"TLSv1.2", "TLSv1.3"}, EndpointIdentificationAlgorithm: c.algorithm}, slog.New(slog.DiscardHandler))
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

// Kafka: a node's own key store, rotated on disk (KIP-226), is the
// client certificate of its next connections to other nodes.
func TestPeerTLSClientCertificateReload(t *testing.T) {
	defer func(old int64) { tlsReloadEvery.Store(old) }(tlsReloadEvery.Swap(int64(time.Millisecond)))
	ca, err := testcert.NewCA("peer CA")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ca.Server(pkix.Name{CommonName: "server"})
	if err != nil {
		t.Fatal(err)
	}
	seen := make(chan string, 4)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{srv.TLS},
		ClientCAs: ca.Pool(), ClientAuth: tls.RequireAndVerifyClientCert})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if c.(*tls.Conn).Handshake() == nil {
				seen <- c.(*tls.Conn).ConnectionState().PeerCertificates[0].Subject.CommonName
			}
			c.Close()
		}
	}()
	keystore := t.TempDir() + "/node.pem"
	write := func(cn string) {
		l, err := ca.Node(pkix.Name{CommonName: cn})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(keystore+".tmp", append(l.KeyPEM, l.CertPEM...), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(keystore+".tmp", keystore); err != nil {
			t.Fatal(err)
		}
	}
	write("node-old")
	cl, err := newTLSClient(config.ListenerSecurity{KeystoreType: "PEM", KeystoreLocation: keystore, TruststoreType: "PEM",
		TruststoreCertificates: string(ca.PEM), EnabledProtocols: []string{"TLSv1.3"}, EndpointIdentificationAlgorithm: "https"},
		slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	p := &peerSecurity{listener: "SSL", tls: cl}
	connect := func() string {
		conn, err := stdnet.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		sc, err := p.secure(context.Background(), conn, ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		sc.Close()
		return <-seen
	}
	if got := connect(); got != "node-old" {
		t.Fatalf("presented %s", got)
	}
	write("node-new")
	time.Sleep(5 * time.Millisecond)
	if got := connect(); got != "node-new" {
		t.Fatalf("after the rotation, presented %s", got)
	}
}
