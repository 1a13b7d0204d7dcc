package cluster

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/varve/varve/config"
)

// newTLSConfig builds a listener's TLS server configuration from Kafka's
// properties, as Kafka's DefaultSslEngineFactory does with
// ssl.keystore.type=PEM and ssl.truststore.type=PEM: the node's key and
// certificate chain (inline, or one file holding both), the certificates
// that client certificates must chain to, ssl.client.auth,
// ssl.enabled.protocols and ssl.cipher.suites.
//
// The key store and trust store come from a tlsStore, so a handshake
// takes the files' current content (security_reload.go); the returned
// configuration hands each handshake the store's current one.
func newTLSConfig(s config.ListenerSecurity, log *slog.Logger) (*tls.Config, *tlsStore, error) {
	base, err := tlsBase(s)
	if err != nil {
		return nil, nil, err
	}
	base.ClientAuth = map[string]tls.ClientAuthType{
		"none": tls.NoClientCert, "requested": tls.VerifyClientCertIfGiven, "required": tls.RequireAndVerifyClientCert,
	}[s.ClientAuth]
	st, err := newTLSStore(s, base, true, log)
	if err != nil {
		return nil, nil, err
	}
	return &tls.Config{GetConfigForClient: st.serverConfig, MinVersion: base.MinVersion, MaxVersion: base.MaxVersion}, st, nil
}

// tlsBase is what a TLS configuration takes from the properties rather
// than from files: ssl.enabled.protocols and ssl.cipher.suites.
func tlsBase(s config.ListenerSecurity) (*tls.Config, error) {
	minV, maxV, err := tlsVersions(s.EnabledProtocols)
	if err != nil {
		return nil, err
	}
	suites, err := cipherSuites(s.CipherSuites)
	if err != nil {
		return nil, err
	}
	return &tls.Config{MinVersion: minV, MaxVersion: maxV, CipherSuites: suites}, nil
}

// keyStore reads the node's key and certificate chain.
func keyStore(s config.ListenerSecurity) (tls.Certificate, error) {
	var none tls.Certificate
	inline := s.KeystoreKey != "" || s.KeystoreCertificateChain != ""
	switch {
	case s.KeystoreLocation == "" && !inline:
		return none, errors.New("no key store: set ssl.keystore.type=PEM with ssl.keystore.location, " +
			"or ssl.keystore.certificate.chain and ssl.keystore.key (prefixed listener.name.<listener>. for one listener)")
	case s.KeystoreType != "PEM":
		return none, fmt.Errorf("ssl.keystore.type=%s: Varve reads PEM key stores only (ssl.keystore.type=PEM)", s.KeystoreType)
	case s.KeystoreLocation != "" && inline:
		return none, errors.New("both ssl.keystore.location and ssl.keystore.key or ssl.keystore.certificate.chain are set: give one")
	case s.KeyPassword != "":
		return none, errors.New("ssl.key.password is set: Varve reads unencrypted PEM keys only")
	}
	chain, key := []byte(s.KeystoreCertificateChain), []byte(s.KeystoreKey)
	where := "ssl.keystore.certificate.chain and ssl.keystore.key"
	if s.KeystoreLocation != "" {
		data, err := os.ReadFile(s.KeystoreLocation)
		if err != nil {
			return none, fmt.Errorf("ssl.keystore.location: %w", err)
		}
		chain, key, where = data, data, "ssl.keystore.location "+s.KeystoreLocation
	}
	if hasPEMBlock(key, "ENCRYPTED PRIVATE KEY") {
		return none, fmt.Errorf("%s: the private key is encrypted; Varve reads unencrypted PEM keys only", where)
	}
	cert, err := tls.X509KeyPair(chain, key)
	if err != nil {
		return none, fmt.Errorf("%s: %w", where, err)
	}
	return cert, nil
}

// trustStore reads the certificates client certificates must chain to;
// nil when none is configured (crypto/tls then verifies against the
// system's roots, as Java against its default trust store).
func trustStore(s config.ListenerSecurity) (*x509.CertPool, error) {
	if s.TruststoreLocation == "" && s.TruststoreCertificates == "" {
		return nil, nil
	}
	if s.TruststoreType != "PEM" {
		return nil, fmt.Errorf("ssl.truststore.type=%s: Varve reads PEM trust stores only (ssl.truststore.type=PEM)", s.TruststoreType)
	}
	if s.TruststoreLocation != "" && s.TruststoreCertificates != "" {
		return nil, errors.New("both ssl.truststore.location and ssl.truststore.certificates are set: give one")
	}
	data, where := []byte(s.TruststoreCertificates), "ssl.truststore.certificates"
	if s.TruststoreLocation != "" {
		var err error
		if data, err = os.ReadFile(s.TruststoreLocation); err != nil {
			return nil, fmt.Errorf("ssl.truststore.location: %w", err)
		}
		where = "ssl.truststore.location " + s.TruststoreLocation
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("%s: no PEM certificate found", where)
	}
	return pool, nil
}

func hasPEMBlock(data []byte, typ string) bool {
	for {
		var b *pem.Block
		if b, data = pem.Decode(data); b == nil {
			return false
		}
		if b.Type == typ {
			return true
		}
	}
}

// tlsVersionOrder lists Kafka's protocol names in crypto/tls's order.
var tlsVersionOrder = []struct {
	name string
	v    uint16
}{{"TLSv1", tls.VersionTLS10}, {"TLSv1.1", tls.VersionTLS11}, {"TLSv1.2", tls.VersionTLS12}, {"TLSv1.3", tls.VersionTLS13}}

// tlsVersions turns ssl.enabled.protocols into crypto/tls's range, which
// cannot leave a gap: TLSv1.1,TLSv1.3 without TLSv1.2 is refused.
func tlsVersions(names []string) (uint16, uint16, error) {
	lo, hi := -1, -1
	for i, v := range tlsVersionOrder {
		if containsFold(names, v.name) {
			if lo < 0 {
				lo = i
			}
			if hi >= 0 && hi != i-1 {
				return 0, 0, fmt.Errorf("ssl.enabled.protocols=%s: crypto/tls enables a contiguous range of versions", strings.Join(names, ","))
			}
			hi = i
		}
	}
	if lo < 0 {
		return 0, 0, errors.New("ssl.enabled.protocols: no TLS version enabled")
	}
	return tlsVersionOrder[lo].v, tlsVersionOrder[hi].v, nil
}

// cipherSuites maps ssl.cipher.suites (IANA names, as Java takes them)
// to crypto/tls's ids; empty keeps crypto/tls's secure defaults. TLS 1.3
// suites may be listed, but crypto/tls always offers its three.
func cipherSuites(names []string) ([]uint16, error) {
	if len(names) == 0 {
		return nil, nil
	}
	known := map[string]uint16{}
	for _, cs := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		known[cs.Name] = cs.ID
	}
	out := make([]uint16, 0, len(names))
	for _, n := range names {
		id, ok := known[n]
		if !ok {
			return nil, fmt.Errorf("ssl.cipher.suites: %q is not a cipher suite crypto/tls implements", n)
		}
		out = append(out, id)
	}
	return out, nil
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
