package cluster

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

func ecJWKS(t *testing.T, kids ...string) []byte {
	var keys []map[string]string
	for _, kid := range kids {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		pt, _ := k.PublicKey.Bytes() // 0x04 || x || y
		keys = append(keys, map[string]string{"kty": "EC", "crv": "P-256", "kid": kid,
			"x": base64.RawURLEncoding.EncodeToString(pt[1:33]), "y": base64.RawURLEncoding.EncodeToString(pt[33:])})
	}
	b, _ := json.Marshal(map[string]any{"keys": keys})
	return b
}

// Kafka: RefreshingHttpsJwks. The set is fetched again once older than
// jwks.endpoint.refresh.ms, and for an unknown key id no more than once
// per jwks.endpoint.retry.backoff.ms; a failed fetch keeps the keys
// known.
func TestJWKSRefresh(t *testing.T) {
	t0 := time.Unix(1000, 0)
	bodies := [][]byte{ecJWKS(t, "a")}
	fetches := 0
	fail := false
	j := &jwksSource{url: "file:///jwks", refresh: time.Minute, backoff: time.Second,
		fetch: func(context.Context, string) ([]byte, error) {
			fetches++
			if fail {
				return nil, errors.New("unreachable")
			}
			return bodies[len(bodies)-1], nil
		}}
	if err := j.reloadLocked(t0); err != nil {
		t.Fatal(err)
	}
	if _, err := j.key("a", t0.Add(time.Second)); err != nil || fetches != 1 {
		t.Fatalf("a known key: %v, %d fetches", err, fetches)
	}
	bodies = append(bodies, ecJWKS(t, "a", "b"))
	if _, err := j.key("b", t0.Add(500*time.Millisecond)); err == nil || fetches != 1 {
		t.Fatalf("an unknown key within the backoff: %v, %d fetches, want no fetch", err, fetches)
	}
	if _, err := j.key("b", t0.Add(2*time.Second)); err != nil || fetches != 2 {
		t.Fatalf("an unknown key after the backoff: %v, %d fetches", err, fetches)
	}
	fail = true
	if _, err := j.key("a", t0.Add(3*time.Minute)); err != nil || fetches != 3 {
		t.Fatalf("a stale set whose fetch fails: %v, %d fetches, want the known key", err, fetches)
	}
	fail = false
	bodies = append(bodies, ecJWKS(t, "c"))
	if _, err := j.key("c", t0.Add(4*time.Minute)); err != nil || fetches != 4 {
		t.Fatalf("a stale set refreshed: %v, %d fetches", err, fetches)
	}
	if _, err := j.key("a", t0.Add(4*time.Minute)); err == nil {
		t.Fatal("a key dropped from the set still verifies")
	}
	if _, err := parseJWKS([]byte(`{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}`)); err == nil {
		t.Fatal("a set without a signing key accepted")
	}
}
