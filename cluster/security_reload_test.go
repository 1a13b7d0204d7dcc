package cluster_test

import (
	"crypto/tls"
	"crypto/x509/pkix"
	"encoding/binary"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/cluster"
	"github.com/varve/varve/config"
	"github.com/varve/varve/internal/testcert"
)

// replaceFile writes data to path through a temporary file and a
// rename, as certificate rotation tools do.
func replaceFile(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := path + ".tmp"
	writeFile(t, tmp, data)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// apiVersionsOver sends ApiVersions on c and reads the answer: the
// connection serves requests. Under TLS 1.3 a refused client
// certificate shows here, on the first read.
func apiVersionsOver(c *tls.Conn) error {
	c.SetDeadline(time.Now().Add(5 * time.Second))
	defer c.SetDeadline(time.Time{})
	if _, err := c.Write(kmsg.NewRequestFormatter().AppendRequest(nil, kmsg.NewPtrApiVersionsRequest(), 7)); err != nil {
		return err
	}
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return err
	}
	_, err := io.CopyN(io.Discard, c, int64(binary.BigEndian.Uint32(size[:])))
	return err
}

// Kafka: a listener's key store and trust store are updated without a
// restart (KIP-226, dynamic ssl.keystore.* and ssl.truststore.*): new
// handshakes use the new certificate and trust the new CA, connections
// made before keep theirs, and a key store that does not load is
// reported and the one in use kept.
func TestTLSCertificateReload(t *testing.T) {
	defer cluster.SetTLSReloadEvery(20 * time.Millisecond)()
	ca, err := testcert.NewCA("ca one")
	if err != nil {
		t.Fatal(err)
	}
	ca2, err := testcert.NewCA("ca two")
	if err != nil {
		t.Fatal(err)
	}
	leaf := func(ca *testcert.CA, cn string, client bool) *testcert.Leaf {
		f := ca.Server
		if client {
			f = ca.Client
		}
		l, err := f(pkix.Name{CommonName: cn})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	dir := t.TempDir()
	keystore, truststore := filepath.Join(dir, "broker.pem"), filepath.Join(dir, "trust.pem")
	pemOf := func(l *testcert.Leaf) []byte { return append(append([]byte{}, l.KeyPEM...), l.CertPEM...) }
	writeFile(t, keystore, pemOf(leaf(ca, "before", false)))
	writeFile(t, truststore, ca.PEM)
	cfg, err := config.Parse(map[string]string{
		"log.dirs": t.TempDir(), "varve.metrics.listener": "", "listeners": "SSL://127.0.0.1:0", "inter.broker.listener.name": "SSL",
		"ssl.keystore.type": "PEM", "ssl.keystore.location": keystore,
		"ssl.truststore.type": "PEM", "ssl.truststore.location": truststore, "ssl.client.auth": "required",
	})
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	b, err := cluster.New(cfg, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown(t.Context())
	addr := b.Addr().String()
	both := ca.Pool()
	both.AppendCertsFromPEM(ca2.PEM)
	dial := func(client *testcert.Leaf) (*tls.Conn, error) {
		c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: both, Certificates: []tls.Certificate{client.TLS}})
		if err == nil {
			if err = apiVersionsOver(c); err != nil {
				c.Close()
			}
		}
		return c, err
	}
	served := func(c *tls.Conn) string { return c.ConnectionState().PeerCertificates[0].Subject.CommonName }

	client1, client2 := leaf(ca, "client", true), leaf(ca2, "client", true)
	old, err := dial(client1)
	if err != nil || served(old) != "before" {
		t.Fatalf("first connection: %v", err)
	}
	defer old.Close()
	if _, err := dial(client2); err == nil {
		t.Fatal("a client of the CA not yet trusted was let in")
	}

	// Rotate both files: a new certificate (from the second CA) and a
	// trust store with both CAs.
	replaceFile(t, keystore, pemOf(leaf(ca2, "after", false)))
	replaceFile(t, truststore, append(append([]byte{}, ca.PEM...), ca2.PEM...))
	waitWithin(t, 5*time.Second, "a new connection served the new certificate", func() bool {
		c, err := dial(client2)
		if err != nil {
			return false
		}
		defer c.Close()
		return served(c) == "after"
	})
	if err := apiVersionsOver(old); err != nil { // the connection made before keeps working, with its certificate
		t.Fatal(err)
	}
	if served(old) != "before" {
		t.Fatal("the old connection's certificate changed")
	}
	if !strings.Contains(logs.String(), "reloaded") {
		t.Errorf("the reload was not logged:\n%s", logs.String())
	}

	// A broken key store is reported and the certificate in use kept.
	replaceFile(t, keystore, []byte("-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n"))
	waitWithin(t, 5*time.Second, "the broken key store reported", func() bool {
		if c, err := dial(client1); err == nil {
			c.Close()
		}
		return strings.Contains(logs.String(), "does not load")
	})
	c, err := dial(client1)
	if err != nil || served(c) != "after" {
		t.Fatalf("after a broken key store: %v", err)
	}
	c.Close()
}
