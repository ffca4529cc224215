// Package authtest gives the daemons' tests a token issuer of their own: an
// Ed25519 key made for the test, its JWKS served by httptest, and tokens
// with the roles a test asks for; and a check that a daemon's auth table
// names exactly the routes it serves.
package authtest

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/hmsuite/hms/internal/auth"
)

// Issuer signs tokens for one test.
type Issuer struct {
	t   testing.TB
	key ed25519.PrivateKey
	srv *httptest.Server
}

// The iss and aud of the tokens an Issuer signs.
const (
	IssuerName = "https://issuer.test/realms/hms"
	Audience   = "hms"
)

// New returns an issuer whose JWKS is served until the test ends.
func New(t testing.TB) *Issuer {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	is := &Issuer{t: t, key: key}
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: key.Public(), KeyID: "test", Algorithm: string(jose.EdDSA), Use: "sig"}}}
	is.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(set)
	}))
	t.Cleanup(is.srv.Close)
	return is
}

// Config is a daemon's auth configuration trusting this issuer, in enforce
// mode.
func (is *Issuer) Config() auth.Config {
	return auth.Config{JWKSURL: is.srv.URL, Issuer: IssuerName, Audience: Audience}
}

// Token returns a token for sub with roles, valid for an hour.
func (is *Issuer) Token(sub string, roles ...auth.Role) string {
	is.t.Helper()
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.EdDSA,
		Key: jose.JSONWebKey{Key: is.key, KeyID: "test"}}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		is.t.Fatal(err)
	}
	now := time.Now()
	tok, err := jwt.Signed(sig).Claims(map[string]any{"iss": IssuerName, "aud": Audience, "sub": sub,
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(), "roles": roles}).Serialize()
	if err != nil {
		is.t.Fatal(err)
	}
	return tok
}

// TokenFile writes Token(sub, roles...) to a file of the test's and returns
// its path.
func (is *Issuer) TokenFile(sub string, roles ...auth.Role) string {
	is.t.Helper()
	return is.write(sub+".token", []byte(is.Token(sub, roles...)))
}

// KeyFile writes the public key as PEM (for -jwt-key-file) and returns its
// path.
func (is *Issuer) KeyFile() string {
	is.t.Helper()
	der, err := x509.MarshalPKIXPublicKey(is.key.Public())
	if err != nil {
		is.t.Fatal(err)
	}
	return is.write("issuer.pem", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

func (is *Issuer) write(name string, b []byte) string {
	p := filepath.Join(is.t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		is.t.Fatal(err)
	}
	return p
}

// CheckTable fails the test unless t names every pattern served and no
// other.
func CheckTable(tb testing.TB, t auth.Table, served []string) {
	tb.Helper()
	unlisted, stale := t.Missing(served)
	for _, p := range unlisted {
		tb.Errorf("%s serves %q, which its auth table lacks (it is admin-only until listed)", t.Daemon, p)
	}
	for _, p := range stale {
		tb.Errorf("%s's auth table lists %q, which it does not serve", t.Daemon, p)
	}
}
