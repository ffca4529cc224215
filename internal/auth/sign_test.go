package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/google/go-cmp/cmp"
)

// nodeSigner is a signer over a key file written as `hms up` writes it.
func nodeSigner(t *testing.T, now time.Time) (*Signer, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "node.key")
	if err := WriteKeyFile(path); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, %v; want mode 0600", fi, err)
	}
	if err := WriteKeyFile(path); err == nil {
		t.Error("WriteKeyFile replaced an existing key")
	}
	s, err := LoadSigner(path, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	jwks := filepath.Join(t.TempDir(), "node.jwks")
	if err := os.WriteFile(jwks, s.JWKS(), 0o644); err != nil {
		t.Fatal(err)
	}
	return s, jwks
}

// TestNodeTokens: a node token bss mints verifies against the node-token
// keys (file or URL) with the node role only, for its xname; the site's
// keys do not verify it, nor do the node-token keys verify a site token.
func TestNodeTokens(t *testing.T) {
	is := newTestIssuer(t)
	s, jwks := nodeSigner(t, is.now)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(s.JWKS()) }))
	t.Cleanup(srv.Close)
	tok, exp, err := s.NodeToken("x3000c0s01b0n0", time.Hour)
	if err != nil || !exp.Equal(is.now.Add(time.Hour)) {
		t.Fatalf("NodeToken: %v, exp %v", err, exp)
	}
	admin, _, _ := s.Sign(Claims{Issuer: NodeIssuer, Subject: "x3000c0s1b0n0", Roles: []Role{Admin, Node}}, time.Hour)
	for _, src := range []string{jwks, srv.URL} {
		cfg := is.config()
		cfg.NodeKeys = src
		v := is.verifier(cfg)
		for _, raw := range []string{tok, admin} {
			got, err := v.Verify(t.Context(), raw)
			if err != nil {
				t.Fatalf("%s: %v", src, err)
			}
			if d := cmp.Diff(Principal{Subject: "x3000c0s1b0n0", Roles: []Role{Node}}, got); d != "" {
				t.Errorf("%s: principal (-want +got):\n%s", src, d)
			}
		}
		if _, err := v.Verify(t.Context(), is.sign("rsa", claims{"roles": []string{"admin"}})); err != nil {
			t.Errorf("%s: the site's token beside node keys: %v", src, err)
		}
	}
	// A token claiming the node issuer but signed with the site's key.
	cfg := is.config()
	cfg.NodeKeys = jwks
	forged := is.sign("rsa", claims{"iss": NodeIssuer, "sub": "x3000c0s1b0n0", "roles": []string{"node"}})
	if _, err := is.verifier(cfg).Verify(t.Context(), forged); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("node issuer signed by the site's key: %v, want refused", err)
	}
	if _, err := is.verifier(is.config()).Verify(t.Context(), tok); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("node token without node keys: %v, want refused", err)
	}
	onlyNodes := is.verifier(Config{NodeKeys: jwks})
	if _, err := onlyNodes.Verify(t.Context(), is.sign("rsa", claims{"roles": []string{"admin"}})); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("site token with node keys only: %v, want refused", err)
	}
	late := is.verifier(Config{NodeKeys: jwks})
	late.now = func() time.Time { return is.now.Add(2 * time.Hour) }
	if _, err := late.Verify(t.Context(), tok); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("expired node token: %v, want refused", err)
	}
	if _, _, err := s.NodeToken("x3000c0s1b0", time.Hour); err == nil {
		t.Error("NodeToken for a BMC xname: want an error")
	}
}

// TestLoadSigner reads the key formats a site may give bss.
func TestLoadSigner(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecDER, _ := x509.MarshalECPrivateKey(ec)
	ec8, _ := x509.MarshalPKCS8PrivateKey(ec)
	rs, _ := rsa.GenerateKey(rand.Reader, 2048)
	small, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	small8, _ := x509.MarshalPKCS8PrivateKey(small)
	tests := []struct {
		name string
		blk  pem.Block
		alg  jose.SignatureAlgorithm
	}{
		{name: "SEC 1 EC", blk: pem.Block{Type: "EC PRIVATE KEY", Bytes: ecDER}, alg: jose.ES256},
		{name: "PKCS#8 EC", blk: pem.Block{Type: "PRIVATE KEY", Bytes: ec8}, alg: jose.ES256},
		{name: "PKCS#1 RSA", blk: pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rs)}, alg: jose.RS256},
		{name: "P-384 refused", blk: pem.Block{Type: "PRIVATE KEY", Bytes: small8}},
		{name: "public key refused", blk: pem.Block{Type: "PUBLIC KEY", Bytes: []byte{1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "k.pem")
			if err := os.WriteFile(path, pem.EncodeToMemory(&tt.blk), 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := LoadSigner(path, nil)
			if tt.alg == "" {
				if err == nil {
					t.Fatal("want an error")
				}
				return
			}
			if err != nil || s.key.Algorithm != string(tt.alg) {
				t.Fatalf("LoadSigner: %v, %+v", err, s)
			}
			tok, _, err := s.NodeToken("x1c0s0b0n0", time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			jwks := filepath.Join(t.TempDir(), "jwks")
			_ = os.WriteFile(jwks, s.JWKS(), 0o600)
			v, err := NewVerifier(Config{NodeKeys: jwks}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := v.Verify(t.Context(), tok); err != nil {
				t.Errorf("verify: %v", err)
			}
		})
	}
}
