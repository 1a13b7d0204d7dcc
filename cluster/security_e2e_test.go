package cluster_test

import (
	"bytes"
	"crypto/tls"
	"crypto/x509/pkix"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/varve/varve/internal/testcert"
	"github.com/varve/varve/record"
)

// securedNode is a broker with a PLAINTEXT listener (for the test's own
// checks) and SSL (client certificates required), SASL_SSL and
// SASL_PLAINTEXT listeners, each on its own port.
type securedNode struct {
	*testBroker
	addrs  map[string]string // listener name -> host:port
	ca     *testcert.CA
	client *testcert.Leaf // trusted client certificate, CN=client,O=varve
	dir    string         // PEM files for kcat
}

const (
	jaasPlain = `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="x" user_alice="alice-secret" user_bob="bob-secret";`
	jaasScram = `org.apache.kafka.common.security.scram.ScramLoginModule required user_alice="alice-secret" user_carol="carol \"quoted\" secret";`
)

func startSecuredNode(t *testing.T, extra map[string]string) *securedNode {
	t.Helper()
	ca, err := testcert.NewCA("varve test CA")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ca.Server(pkix.Name{CommonName: "broker", Organization: []string{"varve"}})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := ca.Client(pkix.Name{CommonName: "client", Organization: []string{"varve"}})
	if err != nil {
		t.Fatal(err)
	}
	n := &securedNode{addrs: map[string]string{}, ca: ca, client: cl, dir: t.TempDir()}
	keystore := filepath.Join(n.dir, "broker.pem")
	writeFile(t, keystore, append(append([]byte{}, srv.KeyPEM...), srv.CertPEM...))
	writeFile(t, filepath.Join(n.dir, "ca.pem"), ca.PEM)
	writeFile(t, filepath.Join(n.dir, "client.pem"), cl.CertPEM)
	writeFile(t, filepath.Join(n.dir, "client.key"), cl.KeyPEM)
	var listeners []string
	for _, name := range []string{"PLAINTEXT", "SSL", "SASL_SSL", "SASL_PLAINTEXT"} {
		n.addrs[name] = fmt.Sprintf("127.0.0.1:%d", freeLoopbackPort(t))
		listeners = append(listeners, name+"://"+n.addrs[name])
	}
	props := map[string]string{
		"listeners":                  strings.Join(listeners, ","),
		"inter.broker.listener.name": "PLAINTEXT",
		// SSL: the key store from one PEM file, client certificates required.
		"ssl.keystore.type":                             "PEM",
		"listener.name.ssl.ssl.keystore.location":       keystore,
		"listener.name.ssl.ssl.client.auth":             "required",
		"listener.name.ssl.ssl.truststore.type":         "PEM",
		"listener.name.ssl.ssl.truststore.certificates": string(ca.PEM),
		// SASL_SSL: the key store inline; SCRAM-SHA-512 and PLAIN.
		"listener.name.sasl_ssl.ssl.keystore.key":               string(srv.KeyPEM),
		"listener.name.sasl_ssl.ssl.keystore.certificate.chain": string(srv.CertPEM),
		"listener.name.sasl_ssl.sasl.enabled.mechanisms":        "SCRAM-SHA-512,PLAIN",
		"listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": jaasScram,
		"listener.name.sasl_ssl.plain.sasl.jaas.config":         jaasPlain,
		// SASL_PLAINTEXT: PLAIN and SCRAM-SHA-256.
		"listener.name.sasl_plaintext.sasl.enabled.mechanisms":        "PLAIN,SCRAM-SHA-256",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config":         jaasPlain,
		"listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config": jaasScram,
		"connection.failed.authentication.delay.ms":                   "300",
	}
	for k, v := range extra {
		props[k] = v
	}
	n.testBroker = startBroker(t, t.TempDir(), props)
	return n
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func (n *securedNode) tlsConfig(certs ...tls.Certificate) *tls.Config {
	return &tls.Config{RootCAs: n.ca.Pool(), Certificates: certs}
}

// produceConsume produces three records through c and reads them back
// through a consumer with the same options.
func produceConsume(t *testing.T, addr, topic string, opts ...kgo.Opt) {
	t.Helper()
	p := client(t, addr, append(opts, kgo.AllowAutoTopicCreation())...)
	var want []string
	for i := range 3 {
		v := fmt.Sprintf("%s-%d", topic, i)
		want = append(want, v)
		produceSync(t, p, &kgo.Record{Topic: topic, Value: []byte(v)})
	}
	c := client(t, addr, append(opts, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
	var got []string
	cx := ctx(t)
	for len(got) < len(want) {
		fs := c.PollFetches(cx)
		if cx.Err() != nil {
			t.Fatalf("consumed %v before the deadline", got)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch: %v", err) })
		for _, r := range fs.Records() {
			got = append(got, string(r.Value))
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("consumed %v, want %v", got, want)
	}
}

// Kafka: SSL listeners (mutual TLS with ssl.client.auth=required),
// SASL_SSL and SASL_PLAINTEXT with PLAIN (RFC 4616) and SCRAM (RFC 5802,
// KIP-84); franz-go produces and consumes on each.
func TestSecuredListenersProduceConsume(t *testing.T) {
	n := startSecuredNode(t, nil)
	for _, c := range []struct {
		name, listener string
		opts           []kgo.Opt
	}{
		{"ssl-mtls", "SSL", []kgo.Opt{kgo.DialTLSConfig(n.tlsConfig(n.client.TLS))}},
		{"sasl-ssl-scram-512", "SASL_SSL", []kgo.Opt{kgo.DialTLSConfig(n.tlsConfig()),
			kgo.SASL(scram.Auth{User: "carol", Pass: `carol "quoted" secret`}.AsSha512Mechanism())}},
		{"sasl-ssl-plain", "SASL_SSL", []kgo.Opt{kgo.DialTLSConfig(n.tlsConfig()),
			kgo.SASL(plain.Auth{User: "bob", Pass: "bob-secret"}.AsMechanism())}},
		{"sasl-plaintext-plain", "SASL_PLAINTEXT", []kgo.Opt{kgo.SASL(plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism())}},
		{"sasl-plaintext-scram-256", "SASL_PLAINTEXT", []kgo.Opt{kgo.SASL(scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha256Mechanism())}},
	} {
		t.Run(c.name, func(t *testing.T) { produceConsume(t, n.addrs[c.listener], c.name, c.opts...) })
	}
}

// Kafka: a wrong password, an unknown user, a mechanism the listener does
// not enable, a certificate the trust store does not hold, no
// certificate where one is required, and a plaintext client on a TLS
// port are all refused, and nothing they sent is stored.
func TestSecuredListenersRefuse(t *testing.T) {
	n := startSecuredNode(t, nil)
	other, err := testcert.NewCA("another CA")
	if err != nil {
		t.Fatal(err)
	}
	mallory, err := other.Client(pkix.Name{CommonName: "mallory"})
	if err != nil {
		t.Fatal(err)
	}
	wrongPlain := kgo.SASL(plain.Auth{User: "alice", Pass: "wrong"}.AsMechanism())
	for _, c := range []struct {
		name, listener string
		opts           []kgo.Opt
		want           error // nil: any error
	}{
		{"plain-wrong-password", "SASL_PLAINTEXT", []kgo.Opt{wrongPlain}, kerr.SaslAuthenticationFailed},
		{"plain-unknown-user", "SASL_PLAINTEXT", []kgo.Opt{kgo.SASL(plain.Auth{User: "eve", Pass: "x"}.AsMechanism())}, kerr.SaslAuthenticationFailed},
		{"scram-wrong-password", "SASL_SSL", []kgo.Opt{kgo.DialTLSConfig(n.tlsConfig()),
			kgo.SASL(scram.Auth{User: "alice", Pass: "wrong"}.AsSha512Mechanism())}, kerr.SaslAuthenticationFailed},
		{"scram-not-enabled", "SASL_SSL", []kgo.Opt{kgo.DialTLSConfig(n.tlsConfig()),
			kgo.SASL(scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha256Mechanism())}, kerr.UnsupportedSaslMechanism},
		{"untrusted-certificate", "SSL", []kgo.Opt{kgo.DialTLSConfig(n.tlsConfig(mallory.TLS))}, nil},
		{"no-certificate", "SSL", []kgo.Opt{kgo.DialTLSConfig(n.tlsConfig())}, nil},
		{"plaintext-on-ssl", "SSL", nil, nil},
		{"plaintext-on-sasl-ssl", "SASL_SSL", []kgo.Opt{wrongPlain}, nil},
		{"no-sasl-on-sasl-port", "SASL_PLAINTEXT", nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			topic := "refused-" + c.name
			cl := client(t, n.addrs[c.listener], append(c.opts, kgo.RequestRetries(0), kgo.RetryTimeout(2*time.Second),
				kgo.AllowAutoTopicCreation(), kgo.RecordDeliveryTimeout(3*time.Second))...)
			err := cl.ProduceSync(ctx(t), &kgo.Record{Topic: topic, Value: []byte("must not be stored")}).FirstErr()
			if err == nil {
				t.Fatal("produced")
			}
			if c.want != nil && !errors.Is(err, c.want) {
				t.Fatalf("error %v, want %v", err, c.want)
			}
			if _, statErr := os.Stat(filepath.Join(n.testBroker.dir, topic+"-0")); statErr == nil {
				t.Fatalf("the refused client's topic %s exists", topic)
			}
		})
	}
}

// rawConn is a plain TCP connection speaking Kafka frames by hand.
type rawConn struct {
	net.Conn
	corr int32
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{Conn: c}
}

// send writes req at its version with a request header.
func (c *rawConn) send(t *testing.T, req interface {
	Key() int16
	GetVersion() int16
	IsFlexible() bool
	AppendTo([]byte) []byte
}) {
	t.Helper()
	c.corr++
	b := binary.BigEndian.AppendUint32(nil, 0)
	b = binary.BigEndian.AppendUint16(b, uint16(req.Key()))
	b = binary.BigEndian.AppendUint16(b, uint16(req.GetVersion()))
	b = binary.BigEndian.AppendUint32(b, uint32(c.corr))
	b = binary.BigEndian.AppendUint16(b, 3)
	b = append(b, "raw"...)
	if req.IsFlexible() {
		b = append(b, 0)
	}
	b = req.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	if _, err := c.Write(b); err != nil {
		t.Fatalf("write key %d: %v", req.Key(), err)
	}
}

// read returns the next response's body (after the correlation id).
func (c *rawConn) read(t *testing.T) []byte {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var hdr [8]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		t.Fatalf("read response: %v", err)
	}
	body := make([]byte, binary.BigEndian.Uint32(hdr[:4])-4)
	if _, err := io.ReadFull(c, body); err != nil {
		t.Fatalf("read response body: %v", err)
	}
	return body
}

// expectClosedSilently checks that the broker closes c without sending
// a byte.
func (c *rawConn) expectClosedSilently(t *testing.T, what string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var got bytes.Buffer
	_, err := io.Copy(&got, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("%s: the connection stayed open", what)
	}
	if got.Len() > 0 {
		t.Fatalf("%s: the broker answered %d bytes before closing", what, got.Len())
	}
}

// Kafka: before SASL authentication succeeds a connection may send only
// ApiVersions, SaslHandshake and SaslAuthenticate, in that order
// (SaslServerAuthenticator); any other request closes it unanswered
// (IllegalSaslStateException). Every API key is sent, with a valid body
// at its highest version, first thing on a new connection, after
// ApiVersions, and after SaslHandshake; nothing it asks for happens.
func TestSaslEveryAPIBeforeAuthenticationCloses(t *testing.T) {
	n := startSecuredNode(t, nil)
	createTopic(t, n.addrs["PLAINTEXT"], "kept", 1, nil)
	addr := n.addrs["SASL_PLAINTEXT"]
	for key := int16(0); key <= kmsg.MaxKey; key++ {
		req := kmsg.RequestForKey(key)
		if req == nil || key == kmsg.ApiVersions.Int16() || key == kmsg.SASLHandshake.Int16() {
			continue
		}
		req.SetVersion(req.MaxVersion())
		fillSneaky(req)
		for _, before := range []string{"nothing", "ApiVersions", "SaslHandshake"} {
			c := dialRaw(t, addr)
			switch before {
			case "ApiVersions":
				c.send(t, kmsg.NewPtrApiVersionsRequest())
				c.read(t)
			case "SaslHandshake":
				hs := kmsg.NewPtrSASLHandshakeRequest()
				hs.SetVersion(1)
				hs.Mechanism = "PLAIN"
				c.send(t, hs)
				c.read(t)
				if key == kmsg.SASLAuthenticate.Int16() {
					continue // the one request allowed here
				}
			}
			c.send(t, req)
			c.expectClosedSilently(t, fmt.Sprintf("%s after %s", kmsg.NameForKey(key), before))
		}
	}
	// A version 0 handshake (bare tokens would follow) is refused and closed.
	c0 := dialRaw(t, addr)
	hs0 := kmsg.NewPtrSASLHandshakeRequest()
	hs0.SetVersion(0)
	hs0.Mechanism = "PLAIN"
	c0.send(t, hs0)
	resp0 := kmsg.NewPtrSASLHandshakeResponse()
	if err := resp0.ReadFrom(c0.read(t)); err != nil || resp0.ErrorCode != kerr.UnsupportedVersion.Code {
		t.Fatalf("SaslHandshake v0: %v, error %d", err, resp0.ErrorCode)
	}
	c0.expectClosedSilently(t, "after SaslHandshake v0")

	// A second ApiVersions, or ApiVersions after SaslHandshake, closes too.
	c := dialRaw(t, addr)
	c.send(t, kmsg.NewPtrApiVersionsRequest())
	c.read(t)
	c.send(t, kmsg.NewPtrApiVersionsRequest())
	c.expectClosedSilently(t, "a second ApiVersions")

	adm := kadm.NewClient(client(t, n.addrs["PLAINTEXT"]))
	topics, err := adm.ListTopics(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if !topics.Has("kept") || topics.Has("sneaky") || len(topics) != 1 {
		t.Fatalf("topics after the refused requests: %v", topics.Names())
	}
	end, err := adm.ListEndOffsets(ctx(t), "kept")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := end.Lookup("kept", 0); o.Offset != 0 {
		t.Fatalf("kept has %d records after refused produces", o.Offset)
	}
}

// fillSneaky makes the requests that would change something ask for it:
// produce to kept, create sneaky, delete kept.
func fillSneaky(req kmsg.Request) {
	switch r := req.(type) {
	case *kmsg.ProduceRequest:
		r.Acks = 1
		t := kmsg.NewProduceRequestTopic()
		t.Topic = "kept"
		p := kmsg.NewProduceRequestTopicPartition()
		p.Records = oneBatch()
		t.Partitions = append(t.Partitions, p)
		r.Topics = append(r.Topics, t)
	case *kmsg.CreateTopicsRequest:
		t := kmsg.NewCreateTopicsRequestTopic()
		t.Topic, t.NumPartitions, t.ReplicationFactor = "sneaky", 1, 1
		r.Topics = append(r.Topics, t)
	case *kmsg.DeleteTopicsRequest:
		name := "kept"
		t := kmsg.NewDeleteTopicsRequestTopic()
		t.Topic = &name
		r.Topics = append(r.Topics, t)
		r.TopicNames = append(r.TopicNames, name)
	}
}

// oneBatch is a RecordBatch v2 holding one record.
func oneBatch() []byte {
	bb := record.NewBatchBuilder(record.CompressionNone)
	bb.Append(record.Record{Value: []byte("sneaky"), Timestamp: time.Now().UnixMilli()})
	batch, err := bb.Build()
	if err != nil {
		panic(err)
	}
	return batch
}

// Kafka, KIP-306: a failed authentication is answered
// SASL_AUTHENTICATION_FAILED only after
// connection.failed.authentication.delay.ms, then the connection closes;
// a good one is answered at once and the connection serves requests.
func TestSaslFailedAuthenticationIsDelayedThenClosed(t *testing.T) {
	n := startSecuredNode(t, nil) // delay 300 ms
	try := func(pw string) (*rawConn, *kmsg.SASLAuthenticateResponse, time.Duration) {
		c := dialRaw(t, n.addrs["SASL_PLAINTEXT"])
		hs := kmsg.NewPtrSASLHandshakeRequest()
		hs.SetVersion(1)
		hs.Mechanism = "PLAIN"
		c.send(t, hs)
		hsResp := kmsg.NewPtrSASLHandshakeResponse()
		hsResp.SetVersion(1)
		if err := hsResp.ReadFrom(c.read(t)); err != nil || hsResp.ErrorCode != 0 {
			t.Fatalf("handshake: %v %d", err, hsResp.ErrorCode)
		}
		au := kmsg.NewPtrSASLAuthenticateRequest()
		au.SetVersion(1)
		au.SASLAuthBytes = []byte("\x00alice\x00" + pw)
		start := time.Now()
		c.send(t, au)
		resp := kmsg.NewPtrSASLAuthenticateResponse()
		resp.SetVersion(1)
		if err := resp.ReadFrom(c.read(t)); err != nil {
			t.Fatal(err)
		}
		return c, resp, time.Since(start)
	}
	c, resp, took := try("wrong")
	if resp.ErrorCode != kerr.SaslAuthenticationFailed.Code || took < 300*time.Millisecond {
		t.Fatalf("wrong password: error %d after %v, want %d after at least 300ms", resp.ErrorCode, took, kerr.SaslAuthenticationFailed.Code)
	}
	c.expectClosedSilently(t, "after a failed authentication")

	c, resp, took = try("alice-secret")
	if resp.ErrorCode != 0 || took > 250*time.Millisecond {
		t.Fatalf("right password: error %d after %v", resp.ErrorCode, took)
	}
	md := kmsg.NewPtrMetadataRequest()
	md.SetVersion(12)
	c.send(t, md)
	c.read(t) // served
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.SetVersion(1)
	hs.Mechanism = "PLAIN"
	c.send(t, hs)
	hsResp := kmsg.NewPtrSASLHandshakeResponse()
	hsResp.SetVersion(1)
	if err := hsResp.ReadFrom(c.read(t)); err != nil || hsResp.ErrorCode != kerr.IllegalSaslState.Code {
		t.Fatalf("SaslHandshake once authenticated: %v, error %d, want ILLEGAL_SASL_STATE", err, hsResp.ErrorCode)
	}
}
