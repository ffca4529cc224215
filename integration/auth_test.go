package integration

import (
	"net/http"
	"os"
	"path/filepath"

	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/auth/authtest"
	"github.com/hmsuite/hms/internal/auth/token"
)

// enforce gives every daemon the auth flags of a suite that checks tokens,
// and the test its admin token.
func (s *suite) enforce() {
	t := s.t
	t.Helper()
	is := authtest.New(t)
	key := filepath.Join(s.dir, "node-token.key")
	if err := auth.WriteKeyFile(key); err != nil {
		t.Fatal(err)
	}
	signer, err := auth.LoadSigner(key, nil)
	if err != nil {
		t.Fatal(err)
	}
	jwks := filepath.Join(s.dir, "node-token.jwks")
	if err := os.WriteFile(jwks, signer.JWKS(), 0o644); err != nil {
		t.Fatal(err)
	}
	s.admin = is.Token("workflow-test", auth.Admin)
	s.authArgs = []string{"-jwt-key-file", is.KeyFile(), "-jwt-issuer", authtest.IssuerName, "-jwt-audience", authtest.Audience,
		"-node-jwt-keys", jwks, "-token-file", is.TokenFile("suite", auth.Admin)}
}

// client is what the test's own calls go through: with the admin token
// when the daemons check tokens.
func (s *suite) client() *http.Client {
	if hc := (token.Config{Token: s.admin}).Client(nil); hc != nil {
		return hc
	}
	return http.DefaultClient
}
