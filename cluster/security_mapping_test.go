package cluster

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/varve/varve/config"
	"github.com/varve/varve/internal/testcert"
	vnet "github.com/varve/varve/net"
)

// Kafka: ssl.principal.mapping.rules (KIP-371) maps an SSL client's
// certificate DN to its principal; a certificate no rule maps fails
// the TLS authentication (SslAuthenticator's NoMatchingRule), so the
// handshake is refused.
func TestSSLPrincipalMappingRules(t *testing.T) {
	ca, err := testcert.NewCA("ca")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ca.Server(pkix.Name{CommonName: "broker"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(map[string]string{
		"log.dirs": t.TempDir(), "varve.metrics.listener": "", "listeners": "SSL://127.0.0.1:0", "inter.broker.listener.name": "SSL",
		"ssl.keystore.type": "PEM", "ssl.keystore.key": string(srv.KeyPEM), "ssl.keystore.certificate.chain": string(srv.CertPEM),
		"ssl.truststore.type": "PEM", "ssl.truststore.certificates": string(ca.PEM), "ssl.client.auth": "required",
		"ssl.principal.mapping.rules": "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L,RULE:^CN=(.*?),OU=(.*?),O=(.*?)$/$1@$2/",
	})
	if err != nil {
		t.Fatal(err)
	}
	sec, err := newSecurity(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ls := sec.byName["SSL"]
	ln, err := tls.Listen("tcp", "127.0.0.1:0", ls.tls)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	sec.listening("SSL", ln.Addr().String())
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { c.(*tls.Conn).Handshake(); c.Read(make([]byte, 1)); c.Close() }()
		}
	}()
	for _, c := range []struct {
		subject pkix.Name
		want    string // "" when refused
	}{
		{pkix.Name{CommonName: "Duke", OrganizationalUnit: []string{"ServiceUsers"}, Organization: []string{"Org"}}, "User:duke"},
		{pkix.Name{CommonName: "adminUser", OrganizationalUnit: []string{"Admin"}, Organization: []string{"Org"}}, "User:adminUser@Admin"},
		{pkix.Name{CommonName: "nobody", Organization: []string{"Org"}}, ""},
	} {
		leaf, err := ca.Client(c.subject)
		if err != nil {
			t.Fatal(err)
		}
		conn, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: ca.Pool(), Certificates: []tls.Certificate{leaf.TLS}})
		if err == nil {
			// TLS 1.3: the client learns of the server's refusal on its
			// first read.
			conn.Write([]byte{0})
			_, err = conn.Read(make([]byte, 1))
			conn.Close()
		}
		refused := err != nil && !errors.Is(err, io.EOF) // the server reads a byte, then closes
		if refused != (c.want == "") {
			t.Errorf("%s: handshake error %v, want refused=%v", c.subject, err, c.want == "")
		}
		if c.want == "" {
			continue
		}
		r := &vnet.Request{Conn: vnet.ConnInfo{Listener: ln.Addr().String(), State: new(vnet.ConnState),
			TLS: &tls.ConnectionState{PeerCertificates: []*x509.Certificate{leaf.Cert}}}}
		if got := sec.principal(r); got != c.want {
			t.Errorf("%s: principal %s, want %s", c.subject, got, c.want)
		}
	}
}
