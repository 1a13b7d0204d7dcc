package net

import (
	"bytes"
	"crypto/tls"
	"crypto/x509/pkix"
	"encoding/binary"
	stdnet "net"
	"reflect"
	"testing"

	"github.com/varve/varve/internal/testcert"
	"github.com/varve/varve/pagecache"
)

// startTLS runs a GoroutineServer on a TLS listener and returns its
// address and the CA that signed its certificate and client certificates.
func startTLS(t *testing.T, h Handler, clientAuth tls.ClientAuthType) (string, *testcert.CA) {
	t.Helper()
	ca, err := testcert.NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := ca.Server(pkix.Name{CommonName: "broker"})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewGoroutineServer(Config{}, h)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := stdnet.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &started{srv: srv, addr: ln.Addr().String(), served: make(chan error, 1)}
	cfg := &tls.Config{Certificates: []tls.Certificate{leaf.TLS}, ClientAuth: clientAuth, ClientCAs: ca.Pool()}
	go func() { s.served <- srv.ServeTLS(ln, cfg) }()
	t.Cleanup(func() { s.stop(t) })
	return s.addr, ca
}

func dialTLS(t *testing.T, addr string, ca *testcert.CA, certs ...tls.Certificate) *tls.Conn {
	t.Helper()
	c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: ca.Pool(), Certificates: certs, ServerName: "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Kafka: under SSL there is no zero-copy (SslTransportLayer reads file
// records into a buffer and encrypts them); a response interleaving bytes
// and file regions still reaches the client whole, through TLS.
func TestTLSRegionsAreCopiedThroughTLS(t *testing.T) {
	f, data := writeRandomFile(t, 1<<20)
	h := HandlerFunc(func(req *Request, respond func(Response)) {
		respond(Response{Parts: []Part{
			{Bytes: []byte("head")},
			{Region: &pagecache.Region{File: f, Off: 100, Len: 1000}},
			{Bytes: []byte("mid")},
			{Region: &pagecache.Region{File: f, Off: 5000, Len: 700000}},
		}})
	})
	addr, ca := startTLS(t, h, tls.NoClientCert)
	c := dialTLS(t, addr, ca)
	want := concat([]byte("head"), data[100:1100], []byte("mid"), data[5000:705000])
	for i := range 3 {
		send(t, c, RequestHeader{Key: 1, Version: 12, CorrelationID: int32(i), Flexible: true}, nil)
		corr, body := readResponse(t, c, true)
		if corr != int32(i) || !bytes.Equal(body, want) {
			t.Fatalf("response %d: %d bytes differ from the %d expected", i, len(body), len(want))
		}
	}
}

// A plaintext Kafka client on a TLS port fails the handshake and is
// closed without a byte of Kafka; the handler never sees its request.
func TestTLSPlaintextClientRefused(t *testing.T) {
	served := make(chan struct{}, 1)
	addr, _ := startTLS(t, HandlerFunc(func(req *Request, respond func(Response)) {
		served <- struct{}{}
		echo(req, respond)
	}), tls.NoClientCert)
	c, err := stdnet.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	send(t, c, produceV3(1), []byte("hello"))
	expectClosedNoKafka(t, c)
	select {
	case <-served:
		t.Fatal("the handler served a request that came in plaintext")
	default:
	}
}

// expectClosedNoKafka reads until the connection closes and checks that
// what came back (a TLS alert at most) is not a Kafka response to
// correlation id 1.
func expectClosedNoKafka(t *testing.T, c stdnet.Conn) {
	t.Helper()
	var got bytes.Buffer
	buf := make([]byte, 512)
	for {
		n, err := c.Read(buf)
		got.Write(buf[:n])
		if err != nil {
			break
		}
	}
	if b := got.Bytes(); len(b) >= 8 && binary.BigEndian.Uint32(b[4:]) == 1 {
		t.Fatalf("a Kafka response came back: %x", b)
	}
	if got.Len() > 16 {
		t.Fatalf("%d bytes came back, more than a TLS alert", got.Len())
	}
}

// Kafka: ssl.client.auth=required refuses a client without a certificate
// the trust store accepts; a trusted client's certificate reaches the
// handler (the principal is its subject), and ConnState keeps the
// handler's value from one request of the connection to the next.
func TestTLSClientCertificates(t *testing.T) {
	h := HandlerFunc(func(req *Request, respond func(Response)) {
		n, _ := req.Conn.State.Load().(int)
		req.Conn.State.Store(n + 1)
		subject := "none"
		if cs := req.Conn.TLS; cs != nil && len(cs.PeerCertificates) > 0 {
			subject = cs.PeerCertificates[0].Subject.CommonName
		}
		respond(Response{Parts: []Part{{Bytes: []byte{byte(n)}}, {Bytes: []byte(subject)}}})
	})
	addr, ca := startTLS(t, h, tls.RequireAndVerifyClientCert)
	alice, err := ca.Client(pkix.Name{CommonName: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	c := dialTLS(t, addr, ca, alice.TLS)
	for i := range 3 {
		send(t, c, produceV3(int32(i)), nil)
		if _, body := readResponse(t, c, false); !bytes.Equal(body, append([]byte{byte(i)}, "alice"...)) {
			t.Fatalf("request %d: %q", i, body)
		}
	}

	other, err := testcert.NewCA("other CA")
	if err != nil {
		t.Fatal(err)
	}
	mallory, err := other.Client(pkix.Name{CommonName: "mallory"})
	if err != nil {
		t.Fatal(err)
	}
	for name, certs := range map[string][]tls.Certificate{"untrusted": {mallory.TLS}, "no certificate": nil} {
		c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: ca.Pool(), Certificates: certs, ServerName: "localhost"})
		if err != nil {
			continue // refused in the handshake already
		}
		// TLS 1.3: the client learns of the refusal on its first read.
		c.Write(frame(produceV3(1), nil))
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Errorf("%s: the server answered", name)
		}
		c.Close()
	}
}

// Stats.Plus adds every counter of two servers.
func TestStatsPlusAddsEveryField(t *testing.T) {
	var a Stats
	v := reflect.ValueOf(&a).Elem()
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.Int64 {
			f.SetInt(1)
		}
	}
	a.RequestsByKey = map[int16]int64{3: 1}
	a.Processors = []ProcessorStats{{ID: 1}}
	sum := a.Plus(a)
	s := reflect.ValueOf(sum)
	for i := range s.NumField() {
		if f := s.Field(i); f.Kind() == reflect.Int64 && f.Int() != 2 {
			t.Errorf("%s = %d after adding 1 and 1", s.Type().Field(i).Name, f.Int())
		}
	}
	if sum.RequestsByKey[3] != 2 || len(sum.Processors) != 2 || a.RequestsByKey[3] != 1 {
		t.Errorf("merged %v %v; the first operand became %v", sum.RequestsByKey, sum.Processors, a.RequestsByKey)
	}
}
