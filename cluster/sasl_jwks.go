package cluster

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"sync"
	"time"
)

// jwksSource is the JSON Web Key Set (RFC 7517) that signs tokens, read
// from sasl.oauthbearer.jwks.endpoint.url (file:// or http(s)://) as
// Kafka's RefreshingHttpsJwks reads it: at start-up, again once the set
// is older than jwks.endpoint.refresh.ms, and again when a token names a
// key id the set lacks, at most once per jwks.endpoint.retry.backoff.ms.
// Fetches happen on the authenticating request, under mu; a failed
// fetch keeps the keys already known. RSA keys (n, e) and EC P-256 keys
// (x, y) are kept; keys of other types, or marked for encryption only
// ("use": "enc"), are skipped.
type jwksSource struct {
	url     string
	refresh time.Duration
	backoff time.Duration
	fetch   func(ctx context.Context, url string) ([]byte, error)

	mu struct {
		sync.Mutex
		keys    map[string]crypto.PublicKey // by kid ("" for a key without one)
		fetched time.Time                   // last successful fetch
		tried   time.Time                   // last fetch attempt
	}
}

// maxJWKSSize bounds what is read of a key set.
const maxJWKSSize = 1 << 20

// jwksFetchTimeout bounds one fetch of the key set.
const jwksFetchTimeout = 10 * time.Second

func newJWKSSource(rawURL string, refresh, backoff time.Duration, now time.Time) (*jwksSource, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "file" && u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("sasl.oauthbearer.jwks.endpoint.url %q: want a file://, http:// or https:// URL", rawURL)
	}
	j := &jwksSource{url: rawURL, refresh: refresh, backoff: backoff, fetch: fetchJWKS}
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.reloadLocked(now); err != nil {
		return nil, fmt.Errorf("sasl.oauthbearer.jwks.endpoint.url %s: %w", rawURL, err)
	}
	return j, nil
}

// key returns the key with id kid, fetching the set again when it is
// stale or lacks kid.
func (j *jwksSource) key(kid string, now time.Time) (crypto.PublicKey, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if now.Sub(j.mu.fetched) >= j.refresh && now.Sub(j.mu.tried) >= j.backoff {
		j.reloadLocked(now) // on failure the known keys serve
	}
	if k, ok := j.mu.keys[kid]; ok {
		return k, nil
	}
	if now.Sub(j.mu.tried) >= j.backoff {
		j.reloadLocked(now)
		if k, ok := j.mu.keys[kid]; ok {
			return k, nil
		}
	}
	return nil, fmt.Errorf("no key with id %q in the key set", kid)
}

// REQUIRES j.mu.
func (j *jwksSource) reloadLocked(now time.Time) error {
	j.mu.tried = now
	ctx, cancel := context.WithTimeout(context.Background(), jwksFetchTimeout)
	defer cancel()
	body, err := j.fetch(ctx, j.url)
	if err != nil {
		return err
	}
	keys, err := parseJWKS(body)
	if err != nil {
		return err
	}
	j.mu.keys, j.mu.fetched = keys, now
	return nil
}

func fetchJWKS(ctx context.Context, rawURL string) ([]byte, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	var r io.ReadCloser
	if u.Scheme == "file" {
		if r, err = os.Open(u.Path); err != nil {
			return nil, err
		}
	} else {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
		if err != nil {
			return nil, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return nil, fmt.Errorf("GET %s: %s", rawURL, resp.Status)
		}
		r = resp.Body
	}
	defer r.Close()
	body, err := io.ReadAll(io.LimitReader(r, maxJWKSSize+1))
	if err == nil && len(body) > maxJWKSSize {
		err = fmt.Errorf("key set larger than %d bytes", maxJWKSSize)
	}
	return body, err
}

// jwk is the part of a JSON Web Key this package reads.
type jwk struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	N   string `json:"n"`
	E   string `json:"e"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

// parseJWKS reads a key set: {"keys": [...]}.
func parseJWKS(body []byte) (map[string]crypto.PublicKey, error) {
	var set struct {
		Keys []jwk `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fmt.Errorf("key set: %w", err)
	}
	keys := map[string]crypto.PublicKey{}
	for _, k := range set.Keys {
		if k.Use == "enc" {
			continue
		}
		pub, err := k.publicKey()
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", k.Kid, err)
		}
		if pub != nil {
			keys[k.Kid] = pub
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("the key set holds no RSA or P-256 signing key")
	}
	return keys, nil
}

// publicKey is the key, nil for a type this package does not use.
func (k jwk) publicKey() (crypto.PublicKey, error) {
	b := func(s string) []byte {
		v, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil {
			return nil
		}
		return v
	}
	switch {
	case k.Kty == "RSA":
		n, e := b(k.N), b(k.E)
		if len(n) == 0 || len(e) == 0 || len(e) > 4 {
			return nil, errors.New("RSA key without a valid n and e")
		}
		return &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}, nil
	case k.Kty == "EC" && k.Crv == "P-256":
		x, y := b(k.X), b(k.Y)
		if len(x) != 32 || len(y) != 32 {
			return nil, errors.New("P-256 key without 32-byte x and y")
		}
		pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
		if err != nil {
			return nil, fmt.Errorf("P-256 key: %w", err)
		}
		return pub, nil
	}
	return nil, nil
}
