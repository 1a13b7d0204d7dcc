// Package testcert makes the certificates TLS tests need: a certificate
// authority and leaf certificates it signs, generated in memory
// (crypto/x509, ECDSA P-256), written out as PEM the way Kafka's
// ssl.keystore.type=PEM properties take them. Nothing here is meant for
// production: keys are unencrypted and live for a day.
//
// A CA is safe for concurrent use once made.
package testcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"sync/atomic"
	"time"
)

// CA is a certificate authority.
type CA struct {
	cert   *x509.Certificate
	key    *ecdsa.PrivateKey
	PEM    []byte // the CA's certificate, PEM: a trust store
	serial atomic.Int64
}

// Leaf is a certificate the CA signed, with its key.
type Leaf struct {
	CertPEM []byte // the leaf's certificate then the CA's: a chain
	KeyPEM  []byte // PKCS#8, unencrypted
	Cert    *x509.Certificate
	TLS     tls.Certificate
}

// NewCA makes a self-signed CA whose subject is CN=name.
func NewCA(name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("testcert: CA: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	ca := &CA{cert: cert, key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
	ca.serial.Store(1)
	return ca, nil
}

// Pool is a pool holding the CA alone.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// Server signs a server certificate for 127.0.0.1, ::1 and localhost.
func (ca *CA) Server(subject pkix.Name) (*Leaf, error) {
	return ca.leaf(subject, x509.ExtKeyUsageServerAuth)
}

// Client signs a client certificate whose subject is subject.
func (ca *CA) Client(subject pkix.Name) (*Leaf, error) {
	return ca.leaf(subject, x509.ExtKeyUsageClientAuth)
}

// Node signs a certificate for a cluster node, which both serves
// (127.0.0.1, ::1 and localhost) and dials other nodes with it.
func (ca *CA) Node(subject pkix.Name) (*Leaf, error) {
	return ca.leaf(subject, x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth)
}

func (ca *CA) leaf(subject pkix.Name, usage ...x509.ExtKeyUsage) (*Leaf, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(ca.serial.Add(1)), Subject: subject,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: usage,
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, fmt.Errorf("testcert: sign %s: %w", subject, err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	l := &Leaf{
		CertPEM: append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), ca.PEM...),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}),
	}
	if l.Cert, err = x509.ParseCertificate(der); err != nil {
		return nil, err
	}
	l.TLS, err = tls.X509KeyPair(l.CertPEM, l.KeyPEM)
	return l, err
}
