package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/google/go-cmp/cmp"
)

func TestVerifyAccepts(t *testing.T) {
	is := newTestIssuer(t)
	tests := []struct {
		name   string
		kid    string
		claims claims
		cfg    func(*Config)
		want   Principal
	}{
		{name: "RS256", kid: "rsa", claims: claims{"roles": []string{"admin"}},
			want: Principal{Subject: "alice", Roles: []Role{Admin}}},
		{name: "ES256", kid: "ec", claims: claims{"roles": []string{"viewer", "operator", "unknown"}},
			want: Principal{Subject: "alice", Roles: []Role{Viewer, Operator}}},
		{name: "EdDSA, roles as one string", kid: "ed", claims: claims{"roles": "viewer offline_access"},
			want: Principal{Subject: "alice", Roles: []Role{Viewer}}},
		{name: "audience list", kid: "rsa", claims: claims{"aud": []string{"account", "hms"}},
			want: Principal{Subject: "alice"}},
		{name: "expired within skew", kid: "rsa", claims: claims{"exp": time.Date(2026, 11, 24, 11, 59, 45, 0, time.UTC).Unix()},
			want: Principal{Subject: "alice"}},
		{name: "node token, sub normalized", kid: "ec", claims: claims{"sub": "x3000c0s01b0n0", "roles": []string{"node"}},
			want: Principal{Subject: "x3000c0s1b0n0", Roles: []Role{Node}}},
		{name: "Keycloak realm and client roles", kid: "rsa",
			claims: claims{"realm_access": map[string]any{"roles": []string{"offline_access", "viewer"}},
				"resource_access": map[string]any{"hms": map[string]any{"roles": []string{"operator"}},
					"other": map[string]any{"roles": []string{"admin"}}}},
			cfg:  func(c *Config) { c.RolesClaims = []string{"realm_access.roles", "resource_access.hms.roles"} },
			want: Principal{Subject: "alice", Roles: []Role{Viewer, Operator}}},
		{name: "no issuer or audience configured", kid: "rsa", claims: claims{"iss": "elsewhere", "aud": nil},
			cfg:  func(c *Config) { c.Issuer, c.Audience = "", "" },
			want: Principal{Subject: "alice"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := is.config()
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			got, err := is.verifier(cfg).Verify(t.Context(), is.sign(tt.kid, tt.claims))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("principal (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVerifyRefuses(t *testing.T) {
	is := newTestIssuer(t)
	other := newTestIssuer(t) // same kids, other keys
	now := is.now
	tests := []struct {
		name  string
		token func() string
	}{
		{name: "expired", token: func() string { return is.sign("rsa", claims{"exp": now.Add(-time.Minute).Unix()}) }},
		{name: "no exp", token: func() string { return is.sign("rsa", claims{"exp": nil}) }},
		{name: "not yet valid", token: func() string { return is.sign("ec", claims{"nbf": now.Add(2 * time.Minute).Unix()}) }},
		{name: "wrong audience", token: func() string { return is.sign("rsa", claims{"aud": "other"}) }},
		{name: "no audience", token: func() string { return is.sign("rsa", claims{"aud": nil}) }},
		{name: "wrong issuer", token: func() string { return is.sign("ed", claims{"iss": "https://evil.test"}) }},
		{name: "unknown kid", token: func() string {
			return is.signWith(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: other.keys["ec"].Key, KeyID: "nope"}}, nil)
		}},
		{name: "signed by another key of the same kid", token: func() string { return other.sign("rsa", nil) }},
		{name: "alg none", token: func() string { return unsigned(t, "none", nil) }},
		{name: "HS256 with the public key as secret", token: func() string {
			der, err := x509.MarshalPKIXPublicKey(is.public("rsa"))
			if err != nil {
				t.Fatal(err)
			}
			return unsigned(t, "HS256", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
		}},
		{name: "node token whose sub is no node", token: func() string {
			return is.sign("rsa", claims{"sub": "x3000c0s1b0", "roles": []string{"node"}})
		}},
		{name: "garbage", token: func() string { return "a.b.c" }},
	}
	v := is.verifier(is.config())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := v.Verify(t.Context(), tt.token())
			if !errors.Is(err, ErrUnauthenticated) {
				t.Fatalf("Verify = %+v, %v; want ErrUnauthenticated", p, err)
			}
		})
	}
}

// unsigned builds a token with header alg, HMAC-signed with secret when
// given, else with an empty signature.
func unsigned(t *testing.T, alg string, secret []byte) string {
	t.Helper()
	enc := base64.RawURLEncoding
	h, _ := json.Marshal(map[string]string{"alg": alg, "typ": "JWT", "kid": "rsa"})
	p, _ := json.Marshal(map[string]any{"iss": "https://issuer.test", "aud": "hms", "sub": "mallory",
		"exp": time.Date(2026, 11, 24, 13, 0, 0, 0, time.UTC).Unix(), "roles": []string{"admin"}})
	in := enc.EncodeToString(h) + "." + enc.EncodeToString(p)
	if secret == nil {
		return in + "."
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(in))
	return in + "." + enc.EncodeToString(m.Sum(nil))
}

func TestJWKSRefresh(t *testing.T) {
	is := newTestIssuer(t)
	v := is.verifier(is.config())
	if _, err := v.Verify(t.Context(), is.sign("rsa", nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(t.Context(), is.sign("ec", nil)); err != nil {
		t.Fatal(err)
	}
	if n := is.fetches.Load(); n != 1 {
		t.Fatalf("fetches after two tokens = %d, want 1 (cached)", n)
	}
	// A key the issuer adds is fetched at its first token, once minRefresh
	// has passed since the last fetch; before that, unknown kids cost no
	// request.
	is.addKey("rsa2", jose.RS256)
	if _, err := v.Verify(t.Context(), is.sign("rsa2", nil)); err == nil {
		t.Fatal("new kid accepted before minRefresh passed; want refused without a fetch")
	}
	if n := is.fetches.Load(); n != 1 {
		t.Fatalf("fetches = %d, want 1 (rate-limited)", n)
	}
	is.now = is.now.Add(minRefresh)
	if _, err := v.Verify(t.Context(), is.sign("rsa2", nil)); err != nil {
		t.Fatalf("rotated key refused: %v", err)
	}
	if n := is.fetches.Load(); n != 2 {
		t.Fatalf("fetches = %d, want 2", n)
	}
	// After maxAge the set is fetched again even for a known kid.
	is.now = is.now.Add(maxAge + time.Second)
	if _, err := v.Verify(t.Context(), is.sign("rsa", nil)); err != nil {
		t.Fatal(err)
	}
	if n := is.fetches.Load(); n != 3 {
		t.Fatalf("fetches = %d, want 3", n)
	}
}

// TestJWKSFetchBlocksNobodyElse: while a fetch for an unknown kid hangs at
// the issuer, a token whose key is already held is checked at once; it used
// to wait behind the fetch's lock (up to its 10 s timeout), so made-up kids
// could stall every request (found by review).
func TestJWKSFetchBlocksNobodyElse(t *testing.T) {
	is := newTestIssuer(t)
	v := is.verifier(is.config())
	if _, err := v.Verify(t.Context(), is.sign("rsa", nil)); err != nil {
		t.Fatal(err)
	}
	is.addKey("rsa2", jose.RS256)
	is.now = is.now.Add(minRefresh)
	hold := make(chan struct{})
	is.mu.Lock()
	is.hold, is.entered = hold, make(chan struct{}, 1)
	entered := is.entered
	is.mu.Unlock()
	var fetcherDone atomic.Bool
	done := make(chan error, 1)
	go func() {
		_, err := v.Verify(t.Context(), is.sign("rsa2", nil))
		fetcherDone.Store(true)
		done <- err
	}()
	<-entered // the fetch has reached the issuer and hangs there
	if _, err := v.Verify(t.Context(), is.sign("ec", nil)); err != nil {
		t.Fatalf("held key refused during a fetch: %v", err)
	}
	if fetcherDone.Load() {
		t.Fatal("a token with a held key was checked only after the hanging fetch ended")
	}
	close(hold)
	if err := <-done; err != nil {
		t.Fatalf("the fetched key refused: %v", err)
	}
}

func TestKeyFile(t *testing.T) {
	is := newTestIssuer(t)
	dir := t.TempDir()
	var pemKeys []byte
	for _, kid := range []string{"rsa"} {
		der, err := x509.MarshalPKIXPublicKey(is.public(kid))
		if err != nil {
			t.Fatal(err)
		}
		pemKeys = append(pemKeys, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})...)
	}
	pemFile := filepath.Join(dir, "key.pem")
	jwksFile := filepath.Join(dir, "jwks.json")
	b, _ := json.Marshal(is.jwks())
	if err := os.WriteFile(pemFile, pemKeys, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(jwksFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ file, kid string }{{pemFile, "rsa"}, {jwksFile, "ed"}, {jwksFile, "ec"}} {
		cfg := is.config()
		cfg.JWKSURL, cfg.KeyFile = "", tt.file
		if _, err := is.verifier(cfg).Verify(t.Context(), is.sign(tt.kid, nil)); err != nil {
			t.Errorf("%s, kid %s: %v", filepath.Base(tt.file), tt.kid, err)
		}
	}
	cfg := is.config()
	cfg.JWKSURL, cfg.KeyFile = "", pemFile
	if _, err := is.verifier(cfg).Verify(t.Context(), is.sign("ec", nil)); err == nil {
		t.Error("token of a key not in the PEM file accepted")
	}
	if is.fetches.Load() != 0 {
		t.Error("a key file verifier fetched the JWKS")
	}
}
