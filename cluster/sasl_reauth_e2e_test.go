package cluster_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// plainLogin authenticates c as user over PLAIN with SaslAuthenticate
// v1 and returns the answer.
func plainLogin(t *testing.T, c *rawConn, user, pw string) *kmsg.SASLAuthenticateResponse {
	t.Helper()
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
	au.SASLAuthBytes = []byte("\x00" + user + "\x00" + pw)
	c.send(t, au)
	resp := kmsg.NewPtrSASLAuthenticateResponse()
	resp.SetVersion(1)
	if err := resp.ReadFrom(c.read(t)); err != nil {
		t.Fatal(err)
	}
	return resp
}

func metadataRequest() *kmsg.MetadataRequest {
	md := kmsg.NewPtrMetadataRequest()
	md.SetVersion(12)
	return md
}

// Kafka: KIP-368 on the wire. SaslAuthenticate v1 carries
// session_lifetime_ms = connections.max.reauth.ms; a request after the
// session's end closes the connection unanswered; a re-authentication
// on the same connection renews it; one as another user fails and
// closes.
func TestSaslSessionLifetimeOnTheWire(t *testing.T) {
	n := startSecuredNode(t, map[string]string{"connections.max.reauth.ms": "400"})
	addr := n.addrs["SASL_PLAINTEXT"]

	c := dialRaw(t, addr)
	if r := plainLogin(t, c, "alice", "alice-secret"); r.ErrorCode != 0 || r.SessionLifetimeMillis != 400 {
		t.Fatalf("login: error %d, session_lifetime_ms %d, want 400", r.ErrorCode, r.SessionLifetimeMillis)
	}
	c.send(t, metadataRequest())
	c.read(t)
	time.Sleep(500 * time.Millisecond)
	before := n.ExpiredSessionsClosed()
	c.send(t, metadataRequest())
	c.expectClosedSilently(t, "a request after the session's end")
	if n.ExpiredSessionsClosed() != before+1 {
		t.Fatalf("expired sessions closed: %d, want %d", n.ExpiredSessionsClosed(), before+1)
	}

	c = dialRaw(t, addr)
	plainLogin(t, c, "alice", "alice-secret")
	time.Sleep(500 * time.Millisecond)
	if r := plainLogin(t, c, "alice", "alice-secret"); r.ErrorCode != 0 || r.SessionLifetimeMillis != 400 {
		t.Fatalf("re-authentication: error %d, session_lifetime_ms %d", r.ErrorCode, r.SessionLifetimeMillis)
	}
	c.send(t, metadataRequest())
	c.read(t) // served: the session is renewed
	if r := plainLogin(t, c, "bob", "bob-secret"); r.ErrorCode != kerr.SaslAuthenticationFailed.Code {
		t.Fatalf("re-authentication as bob: error %d, want SASL_AUTHENTICATION_FAILED", r.ErrorCode)
	}
	c.expectClosedSilently(t, "after a re-authentication as another principal")
}

// Kafka: KIP-368 with a real client. franz-go re-authenticates on its
// own before the session_lifetime_ms it was given runs out; a producer
// that outlives several sessions never has its connection closed for
// an expired session and never fails.
func TestSaslReauthenticationKeepsProducerRunning(t *testing.T) {
	n := startSecuredNode(t, map[string]string{"connections.max.reauth.ms": "1000"})
	for _, c := range []struct {
		name string
		mech kgo.Opt
	}{
		{"plain", kgo.SASL(plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism())},
		{"scram-256", kgo.SASL(scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha256Mechanism())},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := n.Reauthentications()
			topic := "reauth-" + c.name
			p := client(t, n.addrs["SASL_PLAINTEXT"], c.mech, kgo.AllowAutoTopicCreation())
			deadline := time.Now().Add(3500 * time.Millisecond)
			sent := 0
			for time.Now().Before(deadline) {
				produceSync(t, p, &kgo.Record{Topic: topic, Value: []byte(fmt.Sprint(sent))})
				sent++
				time.Sleep(50 * time.Millisecond)
			}
			if got := n.Reauthentications() - before; got < 2 {
				t.Fatalf("%d re-authentications in 3.5 s of 1 s sessions, want at least 2", got)
			}
			if closed := n.ExpiredSessionsClosed(); closed != 0 {
				t.Fatalf("%d connections closed for an expired session", closed)
			}
			if got := consumeN(t, n.addrs["PLAINTEXT"], topic, sent); len(got) != sent {
				t.Fatalf("consumed %d of %d", len(got), sent)
			}
		})
	}
}
