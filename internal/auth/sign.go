package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/hmsuite/hms/internal/xname"
)

// NodeIssuer is the iss of the node tokens bss mints. A daemon given the
// node-token keys (-node-jwt-keys) checks a token naming this issuer
// against those keys only, and grants it the node role only.
const NodeIssuer = "hms-bss"

// Signer mints tokens with one private key: bss's node tokens, and the
// admin token `hms up` writes on first start.
type Signer struct {
	key jose.JSONWebKey // private, with KeyID and Algorithm set
	now func() time.Time
}

// LoadSigner reads a PEM private key (PKCS#8 Ed25519, ECDSA P-256 or RSA;
// SEC 1 "EC PRIVATE KEY"; PKCS#1 "RSA PRIVATE KEY") from path. now is the
// clock (nil: time.Now).
func LoadSigner(path string, now func() time.Time) (*Signer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, fmt.Errorf("signing key %s: no PEM block in it", path)
	}
	var k any
	switch blk.Type {
	case "PRIVATE KEY":
		k, err = x509.ParsePKCS8PrivateKey(blk.Bytes)
	case "EC PRIVATE KEY":
		k, err = x509.ParseECPrivateKey(blk.Bytes)
	case "RSA PRIVATE KEY":
		k, err = x509.ParsePKCS1PrivateKey(blk.Bytes)
	default:
		err = fmt.Errorf("PEM block %q is not a private key", blk.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w", path, err)
	}
	s, err := NewSigner(k, now)
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w", path, err)
	}
	return s, nil
}

// NewSigner signs with k: an ed25519.PrivateKey (EdDSA), an
// *ecdsa.PrivateKey on P-256 (ES256) or an *rsa.PrivateKey of at least
// 2048 bits (RS256). The key ID is the public key's RFC 7638 thumbprint.
func NewSigner(k any, now func() time.Time) (*Signer, error) {
	if now == nil {
		now = time.Now
	}
	var alg jose.SignatureAlgorithm
	switch k := k.(type) {
	case ed25519.PrivateKey:
		alg = jose.EdDSA
	case *ecdsa.PrivateKey:
		if k.Curve != elliptic.P256() {
			return nil, errors.New("an ECDSA key must be on P-256 (ES256)")
		}
		alg = jose.ES256
	case *rsa.PrivateKey:
		if k.N.BitLen() < 2048 {
			return nil, errors.New("an RSA key must have at least 2048 bits")
		}
		alg = jose.RS256
	default:
		return nil, fmt.Errorf("unsupported key type %T (want Ed25519, ECDSA P-256 or RSA)", k)
	}
	jwk := jose.JSONWebKey{Key: k, Algorithm: string(alg), Use: "sig"}
	pub := jwk.Public()
	tp, err := pub.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("key thumbprint: %w", err)
	}
	jwk.KeyID = base64.RawURLEncoding.EncodeToString(tp)
	return &Signer{key: jwk, now: now}, nil
}

// Claims are what a minted token says beside its times.
type Claims struct {
	Issuer, Subject, Audience string
	Roles                     []Role
}

// Sign returns a token with c, valid from now for ttl, with a random jti.
func (s *Signer) Sign(c Claims, ttl time.Duration) (string, time.Time, error) {
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.SignatureAlgorithm(s.key.Algorithm), Key: s.key},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", time.Time{}, fmt.Errorf("sign token: %w", err)
	}
	now := s.now().Truncate(time.Second)
	exp := now.Add(ttl)
	var jti [16]byte
	_, _ = rand.Read(jti[:])
	claims := map[string]any{"iss": c.Issuer, "sub": c.Subject, "iat": now.Unix(), "nbf": now.Unix(),
		"exp": exp.Unix(), "jti": base64.RawURLEncoding.EncodeToString(jti[:]), "roles": c.Roles}
	if c.Audience != "" {
		claims["aud"] = c.Audience
	}
	tok, err := jwt.Signed(sig).Claims(claims).Serialize()
	if err != nil {
		return "", time.Time{}, fmt.Errorf("sign token: %w", err)
	}
	return tok, exp, nil
}

// NodeToken returns a token for the node x (sub = x, role node, iss
// NodeIssuer) valid for ttl, and when it expires.
func (s *Signer) NodeToken(x string, ttl time.Duration) (string, time.Time, error) {
	if !xname.IsNode(x) {
		return "", time.Time{}, fmt.Errorf("node token: %q is no node xname", x)
	}
	return s.Sign(Claims{Issuer: NodeIssuer, Subject: xname.Normalize(x), Roles: []Role{Node}}, ttl)
}

// JWKS is the public key as a JSON Web Key Set, for -node-jwt-keys (a file
// or the URL bss serves it on) or -jwt-key-file.
func (s *Signer) JWKS() []byte {
	b, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{s.key.Public()}})
	return b
}

// WriteKeyFile writes a new Ed25519 private key (PKCS#8 PEM) to path with
// mode 0600; it fails if path exists, so a key is never replaced.
func WriteKeyFile(path string) error {
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return fmt.Errorf("generate key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return fmt.Errorf("generate key: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("write key: %w", err)
	}
	if err := pem.Encode(f, &pem.Block{Type: "PRIVATE KEY", Bytes: der}); err != nil {
		f.Close()
		return fmt.Errorf("write key %s: %w", path, err)
	}
	return f.Close()
}
