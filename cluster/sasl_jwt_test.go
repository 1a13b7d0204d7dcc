package cluster

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func unsignedJWT(t *testing.T, claims map[string]any) *jwt {
	h, _ := json.Marshal(map[string]string{"alg": "none"})
	c, _ := json.Marshal(claims)
	tok, err := parseJWT(base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c) + ".")
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// Kafka: jose4j's JwtConsumer as ValidatorAccessTokenValidator builds it:
// exp and iat required, exp and nbf within the allowed clock skew.
func TestJWTClaimRulesClockSkew(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	rules := jwtClaimRules{skew: 30 * time.Second, subClaim: "sub"}
	for _, c := range []struct {
		exp, nbf time.Duration
		ok       bool
	}{
		{time.Hour, 0, true},
		{-10 * time.Second, 0, true}, // past, within the skew
		{-31 * time.Second, 0, false},
		{time.Hour, 20 * time.Second, true}, // not before, within the skew
		{time.Hour, 40 * time.Second, false},
	} {
		claims := map[string]any{"sub": "alice", "iat": now.Unix(), "exp": now.Add(c.exp).Unix()}
		if c.nbf != 0 {
			claims["nbf"] = now.Add(c.nbf).Unix()
		}
		sub, exp, err := rules.check(unsignedJWT(t, claims), now)
		if (err == nil) != c.ok || (c.ok && (sub != "alice" || !exp.Equal(now.Add(c.exp)))) {
			t.Errorf("exp %v nbf %v: %q %v %v, want ok %v", c.exp, c.nbf, sub, exp, err, c.ok)
		}
	}
}

// Kafka: OAuthBearerClientInitialResponse. The GS2 header "n," with an
// optional a=authzid, %x01-separated key=value pairs with an auth
// "Bearer <token>" pair, closed by %x01%x01; anything else is refused.
func TestParseOAuthInitial(t *testing.T) {
	for _, c := range []struct {
		msg, authz, token string
		ok                bool
	}{
		{"n,,\x01auth=Bearer abc\x01\x01", "", "abc", true},
		{"n,a=alice,\x01host=h\x01auth=bearer abc\x01port=1\x01\x01", "alice", "abc", true},
		{"y,,\x01auth=Bearer abc\x01\x01", "", "", false},
		{"n,,\x01auth=Basic abc\x01\x01", "", "", false},
		{"n,,\x01auth=Bearer abc\x01", "", "", false},
		{"n,,\x01host=h\x01\x01", "", "", false},
		{"n,x=y,\x01auth=Bearer abc\x01\x01", "", "", false},
		{"", "", "", false},
	} {
		authz, token, err := parseOAuthInitial(c.msg)
		if (err == nil) != c.ok || authz != c.authz || token != c.token {
			t.Errorf("%q: %q %q %v, want ok %v", c.msg, authz, token, err, c.ok)
		}
	}
	if _, err := parseJWT(strings.Repeat("a", maxTokenSize+1)); err == nil {
		t.Error("an oversized token parsed")
	}
}
