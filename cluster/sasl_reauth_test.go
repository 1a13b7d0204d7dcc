package cluster

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/varve/varve/config"
)

// Kafka: SaslServerAuthenticator's session lifetime (KIP-368): the
// shorter of connections.max.reauth.ms and the credential's remaining
// life, never negative; none when neither is set.
func TestSessionLifetime(t *testing.T) {
	now := time.Unix(1000, 0)
	for _, c := range []struct {
		max    time.Duration
		expiry time.Time
		want   time.Duration
		ok     bool
	}{
		{0, time.Time{}, 0, false},
		{time.Minute, time.Time{}, time.Minute, true},
		{0, now.Add(time.Hour), time.Hour, true},
		{time.Minute, now.Add(time.Hour), time.Minute, true},
		{time.Hour, now.Add(time.Minute), time.Minute, true},
		{time.Hour, now.Add(-time.Minute), 0, true},
	} {
		if got, ok := sessionLifetime(now, c.max, c.expiry); got != c.want || ok != c.ok {
			t.Errorf("sessionLifetime(%v, %v) = %v %v, want %v %v", c.max, c.expiry.Sub(now), got, ok, c.want, c.ok)
		}
	}
}

// Kafka: KIP-368. Once a session is over, only a SaslHandshake is let
// through (any other request closes the connection); the handshake
// re-authenticates with the same mechanism, as the same principal, and
// the session lasts anew. Without a lifetime there is no
// re-authentication.
func TestSessionExpiryAndReauthentication(t *testing.T) {
	cfg, err := newSaslConfig(config.ListenerSecurity{SaslEnabledMechanisms: []string{"PLAIN", "SCRAM-SHA-256"},
		JAAS: map[string]string{"PLAIN": plainLoginModule + ` required user_alice="a" user_bob="b";`,
			"SCRAM-SHA-256": scramLoginModule + ` required user_alice="a";`}})
	if err != nil {
		t.Fatal(err)
	}
	md, hs := kmsg.Metadata.Int16(), kmsg.SASLHandshake.Int16()
	t0 := time.Unix(1000, 0)
	login := func(ss *saslSession, user, pw string, now time.Time, maxReauth time.Duration) stepResult {
		if v := ss.handshake("PLAIN", cfg.newExchange("PLAIN", nil)); v != handshakeStarted {
			t.Fatalf("handshake: verdict %d", v)
		}
		return ss.step([]byte("\x00"+user+"\x00"+pw), now, maxReauth)
	}
	ss := &saslSession{}
	if r := login(ss, "alice", "a", t0, time.Second); !r.done || !r.expires || r.lifetime != time.Second || r.reauth {
		t.Fatalf("first login: %+v", r)
	}
	if ok, _ := ss.admit(md, 12, t0.Add(999*time.Millisecond)); !ok {
		t.Fatal("a request within the session refused")
	}
	if ok, expired := ss.admit(md, 12, t0.Add(time.Second)); ok || !expired {
		t.Fatal("a request after the session's end admitted")
	}
	if ok, _ := ss.admit(hs, 1, t0.Add(2*time.Second)); !ok {
		t.Fatal("a SaslHandshake after the session's end refused")
	}
	t1 := t0.Add(2 * time.Second)
	if r := login(ss, "alice", "a", t1, time.Second); !r.done || !r.reauth || r.lifetime != time.Second {
		t.Fatalf("re-authentication: %+v", r)
	}
	if ok, _ := ss.admit(md, 12, t1.Add(500*time.Millisecond)); !ok {
		t.Fatal("the renewed session refuses requests")
	}
	if v := ss.handshake("SCRAM-SHA-256", cfg.newExchange("SCRAM-SHA-256", nil)); v != handshakeMechanismSwap {
		t.Fatalf("re-authentication with another mechanism: verdict %d", v)
	}
	ss = &saslSession{}
	login(ss, "alice", "a", t0, time.Second)
	if r := login(ss, "bob", "b", t0, time.Second); r.err == nil || r.done {
		t.Fatalf("re-authentication as another principal: %+v", r)
	}
	if ok, _ := ss.admit(md, 12, t0); ok {
		t.Fatal("a session failed by a principal change still serves")
	}
	ss = &saslSession{}
	if r := login(ss, "alice", "a", t0, 0); r.expires {
		t.Fatalf("a session with connections.max.reauth.ms=0 ends: %+v", r)
	}
	if ok, _ := ss.admit(md, 12, t0.Add(100*time.Hour)); !ok {
		t.Fatal("a session without a lifetime ended")
	}
	if v := ss.handshake("PLAIN", cfg.newExchange("PLAIN", nil)); v != handshakeIllegal {
		t.Fatalf("re-authentication without a lifetime: verdict %d", v)
	}
}
