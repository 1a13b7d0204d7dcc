package cluster

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
	"time"
)

// JSON Web Tokens (RFC 7519) in JWS compact serialization (RFC 7515):
// base64url(header) "." base64url(claims) "." base64url(signature),
// the signature over the first two parts as they are written. Verified
// with the standard library: RS256 (RSASSA-PKCS1-v1_5 with SHA-256, keys
// of 2048 bits or more) and ES256 (ECDSA P-256 with SHA-256, the
// signature as r || s, 32 bytes each, RFC 7518 section 3.4). "none" and
// every other algorithm are refused, and so is a header with "crit".

// maxTokenSize bounds a token: what a client sends is read no further.
const maxTokenSize = 64 << 10

// jwt is a decoded token, its signature not yet checked.
type jwt struct {
	header       jwtHeader
	claims       map[string]json.RawMessage
	signingInput string // header.claims, as sent
	signature    []byte
}

type jwtHeader struct {
	Alg  string          `json:"alg"`
	Kid  string          `json:"kid"`
	Crit json.RawMessage `json:"crit"`
}

// parseJWT splits and decodes a compact JWS. The signature part may be
// empty (an unsecured JWS).
func parseJWT(token string) (*jwt, error) {
	if len(token) > maxTokenSize {
		return nil, fmt.Errorf("token of %d bytes, more than %d", len(token), maxTokenSize)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, fmt.Errorf("a compact JWS has 3 dot-separated parts, this one %d", len(parts))
	}
	t := &jwt{signingInput: parts[0] + "." + parts[1]}
	h, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	if err := json.Unmarshal(h, &t.header); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	c, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, fmt.Errorf("claims: %w", err)
	}
	d := json.NewDecoder(bytes.NewReader(c))
	if err := d.Decode(&t.claims); err != nil || t.claims == nil || d.More() {
		return nil, fmt.Errorf("claims are not a JSON object: %v", err)
	}
	if t.signature, err = base64.RawURLEncoding.DecodeString(parts[2]); err != nil {
		return nil, fmt.Errorf("signature: %w", err)
	}
	return t, nil
}

// verify checks the signature with key, per the header's algorithm.
func (t *jwt) verify(key crypto.PublicKey) error {
	if len(t.header.Crit) > 0 {
		return errors.New("critical header parameters are not understood")
	}
	digest := sha256.Sum256([]byte(t.signingInput))
	switch t.header.Alg {
	case "RS256":
		k, ok := key.(*rsa.PublicKey)
		if !ok {
			return errors.New("RS256 token, key is not RSA")
		}
		if k.N.BitLen() < 2048 {
			return errors.New("RSA key shorter than 2048 bits")
		}
		return rsa.VerifyPKCS1v15(k, crypto.SHA256, digest[:], t.signature)
	case "ES256":
		k, ok := key.(*ecdsa.PublicKey)
		if !ok || k.Curve.Params().Name != "P-256" {
			return errors.New("ES256 token, key is not P-256")
		}
		if len(t.signature) != 64 {
			return errors.New("ES256 signature is not 64 bytes")
		}
		r, s := new(big.Int).SetBytes(t.signature[:32]), new(big.Int).SetBytes(t.signature[32:])
		if !ecdsa.Verify(k, digest[:], r, s) {
			return errors.New("ES256 signature does not verify")
		}
		return nil
	}
	return fmt.Errorf("signature algorithm %q is not accepted (RS256, ES256)", t.header.Alg)
}

// str is a string claim; ok is false when it is absent or not a string.
func (t *jwt) str(name string) (string, bool) {
	var s string
	raw, present := t.claims[name]
	if !present || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// strs is a claim holding a string or a list of strings (aud, scope as
// a list); a string claim with spaces is not split here.
func (t *jwt) strs(name string) ([]string, bool) {
	if s, ok := t.str(name); ok {
		return []string{s}, true
	}
	var l []string
	raw, present := t.claims[name]
	if !present || json.Unmarshal(raw, &l) != nil {
		return nil, false
	}
	return l, true
}

// numericDate is a NumericDate claim (seconds since the epoch, maybe
// fractional); present is false when the claim is absent, err set when
// it is no number.
func (t *jwt) numericDate(name string) (when time.Time, present bool, err error) {
	raw, present := t.claims[name]
	if !present {
		return time.Time{}, false, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || math.IsNaN(f) || math.Abs(f) > 1e12 {
		return time.Time{}, true, fmt.Errorf("claim %s is not a NumericDate", name)
	}
	return time.UnixMilli(int64(f * 1000)), true, nil
}

// jwtClaimRules are the checks Kafka's secured validator makes
// (ValidatorAccessTokenValidator over jose4j's JwtConsumer).
type jwtClaimRules struct {
	skew     time.Duration
	audience []string // one of them in aud; empty: aud not checked
	issuer   string   // iss equal; "": not checked
	subClaim string
}

// check returns the token's principal and expiry, or why it is refused.
func (r jwtClaimRules) check(t *jwt, now time.Time) (string, time.Time, error) {
	exp, ok, err := t.numericDate("exp")
	switch {
	case err != nil:
		return "", time.Time{}, err
	case !ok:
		return "", time.Time{}, errors.New("no exp claim: an expiration time is required")
	case !now.Before(exp.Add(r.skew)):
		return "", time.Time{}, fmt.Errorf("the token expired at %s", exp.UTC().Format(time.RFC3339))
	}
	if _, ok, err := t.numericDate("iat"); err != nil || !ok {
		return "", time.Time{}, errors.New("no iat claim: the issue time is required")
	}
	if nbf, ok, err := t.numericDate("nbf"); err != nil || (ok && now.Add(r.skew).Before(nbf)) {
		return "", time.Time{}, errors.New("the token is not valid yet (nbf)")
	}
	if len(r.audience) > 0 {
		aud, _ := t.strs("aud")
		if !slices.ContainsFunc(aud, func(a string) bool { return slices.Contains(r.audience, a) }) {
			return "", time.Time{}, fmt.Errorf("audience %v is not one of the expected %v", aud, r.audience)
		}
	}
	if iss, _ := t.str("iss"); r.issuer != "" && iss != r.issuer {
		return "", time.Time{}, fmt.Errorf("issuer %q is not the expected %q", iss, r.issuer)
	}
	sub, ok := t.str(r.subClaim)
	if !ok || strings.TrimSpace(sub) == "" {
		return "", time.Time{}, fmt.Errorf("no %s claim: the principal is required", r.subClaim)
	}
	return sub, exp, nil
}
