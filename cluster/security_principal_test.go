package cluster

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/xdg-go/scram"

	"github.com/varve/varve/config"
	"github.com/varve/varve/internal/testcert"
	vnet "github.com/varve/varve/net"
)

// Kafka: with ssl.principal.mapping.rules=DEFAULT the principal of a TLS
// client is User: and its certificate's subject as
// X500Principal.getName() writes it (RFC 2253): most specific first,
// no spaces, special characters escaped, unnamed types as OID=#hex.
func TestTLSPrincipalIsSubjectDN(t *testing.T) {
	ca, err := testcert.NewCA("ca")
	if err != nil {
		t.Fatal(err)
	}
	email := asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 1}
	leaf, err := ca.Client(pkix.Name{
		Country: []string{"US"}, Organization: []string{"Varve, Inc."}, OrganizationalUnit: []string{"eng"},
		CommonName: " alice+ops", ExtraNames: []pkix.AttributeTypeAndValue{{Type: email, Value: "a@x"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// The certificate holds C, O, OU, CN, then the email attribute.
	want := `1.2.840.113549.1.9.1=#0c03614078,CN=\ alice\+ops,OU=eng,O=Varve\, Inc.,C=US`
	if got := subjectDN(leaf.Cert); got != want {
		t.Fatalf("subject DN %s, want %s", got, want)
	}
	sec := &security{byName: map[string]*listenerSecurity{"SSL": {name: "SSL", protocol: "SSL", tls: &tls.Config{}}}}
	sec.listening("SSL", "127.0.0.1:9093")
	r := &vnet.Request{Conn: vnet.ConnInfo{Listener: "127.0.0.1:9093", State: new(vnet.ConnState)}}
	if p := sec.principal(r); p != anonymous {
		t.Errorf("without a certificate: %s", p)
	}
	r.Conn.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{leaf.Cert}}
	if p := sec.principal(r); p != "User:"+want {
		t.Errorf("principal %s", p)
	}
}

// What Varve does not build still stops start-up, naming it.
func TestUnbuiltSecurityStopsStartUp(t *testing.T) {
	ca, _ := testcert.NewCA("ca")
	leaf, _ := ca.Server(pkix.Name{CommonName: "b"})
	pemKS := map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.key": string(leaf.KeyPEM), "ssl.keystore.certificate.chain": string(leaf.CertPEM)}
	for _, c := range []struct {
		name  string
		props map[string]string
		want  string
	}{
		{"jks", map[string]string{"listeners": "SSL://127.0.0.1:0", "ssl.keystore.location": "/k.jks"}, "PEM key stores only"},
		{"no key store", map[string]string{"listeners": "SSL://127.0.0.1:0"}, "no key store"},
		{"encrypted key", merge(pemKS, map[string]string{"listeners": "SSL://127.0.0.1:0", "ssl.key.password": "x"}), "unencrypted"},
		{"gssapi", map[string]string{"listeners": "SASL_PLAINTEXT://127.0.0.1:0"}, "SASL mechanism GSSAPI"},
		{"oauthbearer", map[string]string{"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms": "OAUTHBEARER"}, "SASL mechanism OAUTHBEARER"},
		{"plain without users", map[string]string{"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms": "PLAIN"}, "has no users"},
		{"wrong login module", map[string]string{"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms": "PLAIN",
			"listener.name.sasl_plaintext.plain.sasl.jaas.config": scramLoginModule + ` required user_a="b";`}, "expected " + plainLoginModule},
		{"gap in protocols", merge(pemKS, map[string]string{"listeners": "SSL://127.0.0.1:0", "ssl.enabled.protocols": "TLSv1.1,TLSv1.3"}), "contiguous"},
		{"unknown suite", merge(pemKS, map[string]string{"listeners": "SSL://127.0.0.1:0", "ssl.cipher.suites": "TLS_FOO"}), "TLS_FOO"},
	} {
		props := merge(map[string]string{"log.dirs": t.TempDir(), "varve.metrics.listener": ""}, c.props)
		first, _, _ := strings.Cut(props["listeners"], ":")
		props["inter.broker.listener.name"] = first
		cfg, err := config.Parse(props)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if _, err := newSecurity(cfg, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		} else if strings.Contains(err.Error(), "PRIVATE KEY") || strings.Contains(err.Error(), `"b"`) {
			t.Errorf("%s: the error shows a secret: %v", c.name, err)
		}
	}
}

func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// Kafka's ScramSaslServer: a wrong password, a proof over another
// message, a nonce that does not end with the server's, or a replayed
// final message fail (librdkafka's longer nonce is checked by the kcat
// test). An authorization id
// other than the user is refused (RFC 5802 a=).
func TestScramExchange(t *testing.T) {
	cfg, err := newSaslConfig(config.ListenerSecurity{SaslEnabledMechanisms: []string{"SCRAM-SHA-256"},
		JAAS: map[string]string{"SCRAM-SHA-256": scramLoginModule + ` required user_alice="pw";`}})
	if err != nil {
		t.Fatal(err)
	}
	run := func(pw, authz string, mangle func(c2 string) string) error {
		client, _ := scram.SHA256.NewClient("alice", pw, authz)
		cc := client.NewConversation()
		ex := cfg.newExchange("SCRAM-SHA-256", nil)
		c1, _ := cc.Step("")
		s1, _, _, err := ex.step([]byte(c1))
		if err != nil {
			return err
		}
		c2, err := cc.Step(string(s1))
		if err != nil {
			return err
		}
		s2, user, done, err := ex.step([]byte(mangle(c2)))
		if err != nil {
			return err
		}
		if !done || user != "alice" {
			return fmt.Errorf("done %v user %q", done, user)
		}
		if _, _, _, err := ex.step([]byte(c2)); err == nil {
			return errors.New("a replayed client-final was accepted")
		}
		_, err = cc.Step(string(s2)) // the client checks the server's signature
		return err
	}
	same := func(c2 string) string { return c2 }
	if err := run("pw", "", same); err != nil {
		t.Fatalf("good exchange: %v", err)
	}
	for name, err := range map[string]error{
		"wrong password": run("nope", "", same),
		"authzid":        run("pw", "bob", same),
		"other nonce":    run("pw", "", func(c2 string) string { return strings.Replace(c2, ",p=", "x,p=", 1) }),
		"changed proof":  run("pw", "", func(c2 string) string { return c2[:len(c2)-4] + "AAA=" }),
	} {
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
