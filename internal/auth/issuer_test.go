package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// testIssuer signs tokens with keys made for one test and serves their JWKS.
type testIssuer struct {
	t       testing.TB
	mu      sync.Mutex
	keys    map[string]jose.JSONWebKey // kid -> private key
	algs    map[string]jose.SignatureAlgorithm
	srv     *httptest.Server
	fetches atomic.Int32
	now     time.Time
	// hold, when set, makes the JWKS handler signal entered and wait for
	// hold to close (or the request to end).
	hold, entered chan struct{}
}

func newTestIssuer(t testing.TB) *testIssuer {
	t.Helper()
	is := &testIssuer{t: t, keys: map[string]jose.JSONWebKey{}, algs: map[string]jose.SignatureAlgorithm{},
		now: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)}
	is.addKey("rsa", jose.RS256)
	is.addKey("ec", jose.ES256)
	is.addKey("ed", jose.EdDSA)
	is.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		is.fetches.Add(1)
		is.mu.Lock()
		hold, entered := is.hold, is.entered
		is.mu.Unlock()
		if hold != nil {
			entered <- struct{}{}
			select {
			case <-hold:
			case <-r.Context().Done():
			}
		}
		_ = json.NewEncoder(w).Encode(is.jwks())
	}))
	t.Cleanup(is.srv.Close)
	return is
}

func (is *testIssuer) addKey(kid string, alg jose.SignatureAlgorithm) {
	is.t.Helper()
	var priv crypto.Signer
	var err error
	switch alg {
	case jose.RS256:
		priv, err = rsa.GenerateKey(rand.Reader, 2048)
	case jose.ES256:
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case jose.EdDSA:
		_, priv, err = ed25519.GenerateKey(rand.Reader)
	}
	if err != nil {
		is.t.Fatal(err)
	}
	is.mu.Lock()
	defer is.mu.Unlock()
	is.keys[kid] = jose.JSONWebKey{Key: priv, KeyID: kid, Algorithm: string(alg), Use: "sig"}
	is.algs[kid] = alg
}

// public is kid's public key.
func (is *testIssuer) public(kid string) any {
	is.mu.Lock()
	defer is.mu.Unlock()
	k := is.keys[kid]
	return k.Public().Key
}

func (is *testIssuer) jwks() jose.JSONWebKeySet {
	is.mu.Lock()
	defer is.mu.Unlock()
	var set jose.JSONWebKeySet
	for _, k := range is.keys {
		set.Keys = append(set.Keys, k.Public())
	}
	return set
}

// claims are a token's claims; zero fields get the defaults of sign.
type claims map[string]any

// sign returns a token signed with kid's key; exp, iat, iss and aud default
// to a valid token of the test's verifier.
func (is *testIssuer) sign(kid string, c claims) string {
	is.t.Helper()
	is.mu.Lock()
	key := jose.SigningKey{Algorithm: is.algs[kid], Key: is.keys[kid]}
	is.mu.Unlock()
	return is.signWith(key, c)
}

func (is *testIssuer) signWith(key jose.SigningKey, c claims) string {
	is.t.Helper()
	full := claims{"iss": "https://issuer.test", "aud": "hms", "sub": "alice",
		"iat": is.now.Unix(), "exp": is.now.Add(5 * time.Minute).Unix()}
	for k, v := range c {
		if v == nil {
			delete(full, k)
			continue
		}
		full[k] = v
	}
	sig, err := jose.NewSigner(key, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		is.t.Fatal(err)
	}
	tok, err := jwt.Signed(sig).Claims(map[string]any(full)).Serialize()
	if err != nil {
		is.t.Fatal(err)
	}
	return tok
}

// config is a verifier configuration for this issuer's JWKS.
func (is *testIssuer) config() Config {
	return Config{JWKSURL: is.srv.URL, Issuer: "https://issuer.test", Audience: "hms"}
}

func (is *testIssuer) verifier(cfg Config) *Verifier {
	is.t.Helper()
	v, err := NewVerifier(cfg, is.srv.Client(), func() time.Time { return is.now })
	if err != nil {
		is.t.Fatal(err)
	}
	return v
}
