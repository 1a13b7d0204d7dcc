package cluster_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
)

// signer makes JWS tokens the way an identity provider does.
type signer struct {
	kid string
	rsa *rsa.PrivateKey
	ec  *ecdsa.PrivateKey
}

func newRSASigner(t *testing.T, kid string) signer {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return signer{kid: kid, rsa: k}
}

func newECSigner(t *testing.T, kid string) signer {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return signer{kid: kid, ec: k}
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// jwk is the signer's public key as a key set member.
func (s signer) jwk() map[string]string {
	if s.rsa != nil {
		return map[string]string{"kty": "RSA", "kid": s.kid, "use": "sig", "alg": "RS256",
			"n": b64(s.rsa.N.Bytes()), "e": b64(big.NewInt(int64(s.rsa.E)).Bytes())}
	}
	pad := func(b []byte) []byte { return append(make([]byte, 32-len(b)), b...) }
	return map[string]string{"kty": "EC", "kid": s.kid, "crv": "P-256", "use": "sig",
		"x": b64(pad(s.ec.X.Bytes())), "y": b64(pad(s.ec.Y.Bytes()))}
}

func jwksJSON(t *testing.T, signers ...signer) []byte {
	var keys []map[string]string
	for _, s := range signers {
		keys = append(keys, s.jwk())
	}
	b, err := json.Marshal(map[string]any{"keys": keys})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// token signs claims.
func (s signer) token(t *testing.T, claims map[string]any) string {
	alg := "RS256"
	if s.ec != nil {
		alg = "ES256"
	}
	h, _ := json.Marshal(map[string]string{"alg": alg, "kid": s.kid, "typ": "JWT"})
	c, _ := json.Marshal(claims)
	input := b64(h) + "." + b64(c)
	digest := sha256.Sum256([]byte(input))
	var sig []byte
	var err error
	if s.rsa != nil {
		sig, err = rsa.SignPKCS1v15(rand.Reader, s.rsa, crypto.SHA256, digest[:])
	} else {
		var r, ss *big.Int
		r, ss, err = ecdsa.Sign(rand.Reader, s.ec, digest[:])
		sig = append(r.FillBytes(make([]byte, 32)), ss.FillBytes(make([]byte, 32))...)
	}
	if err != nil {
		t.Fatal(err)
	}
	return input + "." + b64(sig)
}

// claims are a valid token's for alice.
func claims(exp time.Duration, extra ...any) map[string]any {
	now := time.Now()
	c := map[string]any{"sub": "alice", "aud": []string{"varve"}, "iss": "https://issuer.test",
		"iat": now.Unix(), "exp": now.Add(exp).Unix()}
	for i := 0; i+1 < len(extra); i += 2 {
		c[extra[i].(string)] = extra[i+1]
	}
	return c
}

func oauthLogin(t *testing.T, addr, token string) error {
	t.Helper()
	cl := client(t, addr, kgo.SASL(oauth.Auth{Token: token}.AsMechanism()), kgo.RequestRetries(0))
	return cl.Ping(ctx(t))
}

// oauthNode is a node whose SASL_PLAINTEXT listener takes OAUTHBEARER
// tokens signed by the key set at url.
func oauthNode(t *testing.T, url string, extra map[string]string) *securedNode {
	props := map[string]string{
		"listener.name.sasl_plaintext.sasl.enabled.mechanisms":                        "OAUTHBEARER",
		"listener.name.sasl_plaintext.oauthbearer.sasl.oauthbearer.jwks.endpoint.url": url,
		"sasl.oauthbearer.expected.audience":                                          "varve,other",
		"sasl.oauthbearer.expected.issuer":                                            "https://issuer.test",
		"connection.failed.authentication.delay.ms":                                   "0",
	}
	for k, v := range extra {
		props[k] = v
	}
	return startSecuredNode(t, props)
}

// Kafka: KIP-768's secured validator. Tokens signed RS256 or ES256 by a
// key of the JWKS, for the expected audience and issuer, authenticate
// their subject; expired ones, other audiences or issuers, unknown keys,
// bad signatures and unsigned tokens are refused with
// SASL_AUTHENTICATION_FAILED and Kafka's error JSON.
func TestOAuthBearerSecuredValidator(t *testing.T) {
	rs, ec, stranger := newRSASigner(t, "rsa-1"), newECSigner(t, "ec-1"), newRSASigner(t, "rsa-1")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "jwks.json"), jwksJSON(t, rs, ec))
	n := oauthNode(t, "file://"+filepath.Join(dir, "jwks.json"), nil)
	addr := n.addrs["SASL_PLAINTEXT"]

	produceConsume(t, addr, "oauth-rs256", kgo.SASL(oauth.Auth{Token: rs.token(t, claims(time.Hour))}.AsMechanism()))
	if err := oauthLogin(t, addr, ec.token(t, claims(time.Hour, "aud", "other"))); err != nil {
		t.Fatalf("ES256 token: %v", err)
	}
	unsigned := func() string {
		h, _ := json.Marshal(map[string]string{"alg": "none"})
		c, _ := json.Marshal(claims(time.Hour))
		return b64(h) + "." + b64(c) + "."
	}()
	noSub := claims(time.Hour)
	delete(noSub, "sub")
	noIat := claims(time.Hour)
	delete(noIat, "iat")
	for name, tok := range map[string]string{
		"expired":        rs.token(t, claims(-time.Minute)),
		"wrong-audience": rs.token(t, claims(time.Hour, "aud", "someone-else")),
		"wrong-issuer":   ec.token(t, claims(time.Hour, "iss", "https://evil.test")),
		"not-yet-valid":  rs.token(t, claims(time.Hour, "nbf", time.Now().Add(time.Hour).Unix())),
		"no-sub":         rs.token(t, noSub),
		"no-iat":         rs.token(t, noIat),
		"bad-signature":  stranger.token(t, claims(time.Hour)),
		"unknown-key":    newECSigner(t, "ec-2").token(t, claims(time.Hour)),
		"unsigned":       unsigned,
		"tampered":       strings.Replace(rs.token(t, claims(time.Hour)), ".", "x.", 1),
	} {
		err := oauthLogin(t, addr, tok)
		if !errors.Is(err, kerr.SaslAuthenticationFailed) || !strings.Contains(err.Error(), `{"status":"invalid_token"}`) {
			t.Errorf("%s token: %v, want SASL_AUTHENTICATION_FAILED with the error JSON", name, err)
		}
	}
}

// Kafka: OAuthBearerSaslServer on the wire. A refused token is answered
// without an error, the error JSON as the challenge (RFC 7628 section
// 3.2.2); the client's %x01 then fails the exchange with
// SASL_AUTHENTICATION_FAILED and the JSON as the message. A valid
// token's session ends when the token expires (KIP-368).
func TestOAuthBearerOnTheWire(t *testing.T) {
	rs := newRSASigner(t, "rsa-1")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "jwks.json"), jwksJSON(t, rs))
	n := oauthNode(t, "file://"+filepath.Join(dir, "jwks.json"), map[string]string{"connections.max.reauth.ms": "3600000"})
	send := func(c *rawConn, auth []byte) *kmsg.SASLAuthenticateResponse {
		au := kmsg.NewPtrSASLAuthenticateRequest()
		au.SetVersion(1)
		au.SASLAuthBytes = auth
		c.send(t, au)
		resp := kmsg.NewPtrSASLAuthenticateResponse()
		resp.SetVersion(1)
		if err := resp.ReadFrom(c.read(t)); err != nil {
			t.Fatal(err)
		}
		return resp
	}
	start := func(token string) (*rawConn, *kmsg.SASLAuthenticateResponse) {
		c := dialRaw(t, n.addrs["SASL_PLAINTEXT"])
		hs := kmsg.NewPtrSASLHandshakeRequest()
		hs.SetVersion(1)
		hs.Mechanism = "OAUTHBEARER"
		c.send(t, hs)
		c.read(t)
		return c, send(c, []byte("n,,\x01auth=Bearer "+token+"\x01\x01"))
	}
	c, resp := start(rs.token(t, claims(-time.Hour)))
	if resp.ErrorCode != 0 || string(resp.SASLAuthBytes) != `{"status":"invalid_token"}` {
		t.Fatalf("expired token: error %d, challenge %q", resp.ErrorCode, resp.SASLAuthBytes)
	}
	resp = send(c, []byte{1})
	if resp.ErrorCode != kerr.SaslAuthenticationFailed.Code || resp.ErrorMessage == nil || *resp.ErrorMessage != `{"status":"invalid_token"}` {
		t.Fatalf("after %%x01: error %d, message %v", resp.ErrorCode, resp.ErrorMessage)
	}
	c.expectClosedSilently(t, "after a refused token")

	c, resp = start(rs.token(t, claims(5*time.Second)))
	if resp.ErrorCode != 0 || len(resp.SASLAuthBytes) != 0 || resp.SessionLifetimeMillis <= 2000 || resp.SessionLifetimeMillis > 5000 {
		t.Fatalf("valid token: error %d, bytes %q, session lifetime %d ms, want the token's remaining 5 s",
			resp.ErrorCode, resp.SASLAuthBytes, resp.SessionLifetimeMillis)
	}
	c.send(t, metadataRequest())
	c.read(t)
	if _, resp = start(rs.token(t, claims(time.Hour, "sub", "bob"))); resp.ErrorCode != 0 {
		t.Fatalf("bob's token: error %d", resp.ErrorCode)
	}
	c = dialRaw(t, n.addrs["SASL_PLAINTEXT"])
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.SetVersion(1)
	hs.Mechanism = "OAUTHBEARER"
	c.send(t, hs)
	c.read(t)
	if resp = send(c, []byte("n,a=mallory,\x01auth=Bearer "+rs.token(t, claims(time.Hour))+"\x01\x01")); resp.ErrorCode != kerr.SaslAuthenticationFailed.Code {
		t.Fatalf("an authorization id other than the token's subject: error %d", resp.ErrorCode)
	}
}

// Kafka: RefreshingHttpsJwks. The key set comes from an http(s) URL too, and
// a token signed by a key added to the set later (a key rotation) is
// accepted once the set is fetched again for the unknown key id.
func TestOAuthBearerJWKSRotation(t *testing.T) {
	old, rotated := newRSASigner(t, "2024"), newECSigner(t, "2025")
	var current atomic.Pointer[[]byte]
	set := jwksJSON(t, old)
	current.Store(&set)
	var fetches atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fetches.Add(1)
		w.Write(*current.Load())
	}))
	defer srv.Close()
	n := oauthNode(t, srv.URL+"/jwks", map[string]string{"sasl.oauthbearer.jwks.endpoint.retry.backoff.ms": "0"})
	addr := n.addrs["SASL_PLAINTEXT"]
	if err := oauthLogin(t, addr, old.token(t, claims(time.Hour))); err != nil {
		t.Fatalf("a key from the http key set: %v", err)
	}
	if err := oauthLogin(t, addr, rotated.token(t, claims(time.Hour))); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("a key not yet published: %v", err)
	}
	published := jwksJSON(t, old, rotated)
	current.Store(&published)
	before := fetches.Load()
	if err := oauthLogin(t, addr, rotated.token(t, claims(time.Hour))); err != nil {
		t.Fatalf("the rotated key after its publication: %v", err)
	}
	if fetches.Load() == before {
		t.Fatal("the key set was not fetched again for an unknown key id")
	}
}

// Kafka: OAuthBearerUnsecuredValidatorCallbackHandler, for development:
// with the listener's OAuthBearerLoginModule JAAS configuration (and no
// JWKS) unsigned tokens authenticate their sub; signed ones, expired
// ones, and ones without a required scope do not.
func TestOAuthBearerUnsecured(t *testing.T) {
	n := startSecuredNode(t, map[string]string{
		"listener.name.sasl_plaintext.sasl.enabled.mechanisms": "OAUTHBEARER",
		"listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config": oauthJAAS +
			` required unsecuredLoginStringClaim_sub="admin" unsecuredValidatorRequiredScope="produce";`,
		"connection.failed.authentication.delay.ms": "0",
	})
	addr := n.addrs["SASL_PLAINTEXT"]
	unsigned := func(c map[string]any) string {
		h, _ := json.Marshal(map[string]string{"alg": "none"})
		b, _ := json.Marshal(c)
		return b64(h) + "." + b64(b) + "."
	}
	if err := oauthLogin(t, addr, unsigned(claims(time.Hour, "scope", "read produce"))); err != nil {
		t.Fatalf("unsigned token: %v", err)
	}
	for name, tok := range map[string]string{
		"expired":  unsigned(claims(-time.Minute, "scope", "produce")),
		"signed":   newRSASigner(t, "k").token(t, claims(time.Hour, "scope", "produce")),
		"no-scope": unsigned(claims(time.Hour, "scope", "read")),
	} {
		if err := oauthLogin(t, addr, tok); !errors.Is(err, kerr.SaslAuthenticationFailed) {
			t.Errorf("%s: %v, want SASL_AUTHENTICATION_FAILED", name, err)
		}
	}
	err := oauthLogin(t, addr, unsigned(claims(time.Hour, "scope", "read")))
	if !strings.Contains(fmt.Sprint(err), `{"status":"insufficient_scope", "scope":"produce"}`) {
		t.Fatalf("missing scope: %v, want Kafka's insufficient_scope JSON", err)
	}
}

const oauthJAAS = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
