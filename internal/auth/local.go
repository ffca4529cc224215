package auth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Local is the key material of a suite that issues its own tokens (hms up
// -auth-local), under one directory: the key that signs the admin token,
// the key bss signs node tokens with, each with its public JWKS beside it,
// the admin token and the SCN token.
type Local struct {
	// SigningKey signs AdminToken; SigningJWKS is its public key, what
	// the daemons check site tokens with (Config.KeyFile).
	SigningKey, SigningJWKS string
	// NodeKey is bss's -node-token-key; NodeJWKS its public key
	// (Config.NodeKeys).
	NodeKey, NodeJWKS string
	// AdminToken holds a token with the admin role, for the daemons'
	// calls to each other and for the CLI (mode 0600).
	AdminToken string
	// SCNToken holds a token with the scn role only, which hsm and hmnfd
	// send their SCN subscribers (mode 0600).
	SCNToken string
	// Made lists the files PrepareLocal wrote this time.
	Made []string
}

// LocalIssuer is the iss of the admin token hms up signs.
const LocalIssuer = "hms-up"

// AdminTokenTTL is how long the local admin and SCN tokens are valid; each
// is minted again at a start that finds it missing, not verifying with the
// signing key, or valid for less than AdminTokenRenew.
const (
	AdminTokenTTL   = 365 * 24 * time.Hour
	AdminTokenRenew = 30 * 24 * time.Hour
)

// PrepareLocal makes dir (mode 0700) and whatever of its keys and admin
// token is missing or stale, and returns their paths. Keys are made once and
// never replaced: delete one to rotate it (the admin token follows).
func PrepareLocal(ctx context.Context, dir string, now func() time.Time) (Local, error) {
	if now == nil {
		now = time.Now
	}
	l := Local{SigningKey: filepath.Join(dir, "signing.key"), SigningJWKS: filepath.Join(dir, "signing.jwks"),
		NodeKey: filepath.Join(dir, "node-token.key"), NodeJWKS: filepath.Join(dir, "node-token.jwks"),
		AdminToken: filepath.Join(dir, "admin.token"), SCNToken: filepath.Join(dir, "scn.token")}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Local{}, fmt.Errorf("auth directory: %w", err)
	}
	signer, err := l.key(l.SigningKey, l.SigningJWKS, now)
	if err != nil {
		return Local{}, err
	}
	if _, err := l.key(l.NodeKey, l.NodeJWKS, now); err != nil {
		return Local{}, err
	}
	for _, t := range []struct {
		path, sub string
		role      Role
	}{{l.AdminToken, "hms-admin", Admin}, {l.SCNToken, "hms-scn", SCN}} {
		if l.fresh(ctx, t.path, t.role, now) {
			continue
		}
		tok, _, err := signer.Sign(Claims{Issuer: LocalIssuer, Subject: t.sub, Roles: []Role{t.role}}, AdminTokenTTL)
		if err != nil {
			return Local{}, err
		}
		if err := writeFile(t.path, []byte(tok+"\n"), 0o600); err != nil {
			return Local{}, err
		}
		l.Made = append(l.Made, t.path)
	}
	return l, nil
}

// key loads the private key at path, making it first if absent, and
// (re)writes its public JWKS to jwks.
func (l *Local) key(path, jwks string, now func() time.Time) (*Signer, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		if err := WriteKeyFile(path); err != nil {
			return nil, err
		}
		l.Made = append(l.Made, path)
	}
	s, err := LoadSigner(path, now)
	if err != nil {
		return nil, err
	}
	if err := writeFile(jwks, s.JWKS(), 0o644); err != nil {
		return nil, err
	}
	return s, nil
}

// fresh reports whether the token in path verifies with the signing key,
// grants role and is valid for AdminTokenRenew more.
func (l *Local) fresh(ctx context.Context, path string, role Role, now func() time.Time) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	v, err := NewVerifier(Config{KeyFile: l.SigningJWKS, Issuer: LocalIssuer},
		nil, func() time.Time { return now().Add(AdminTokenRenew) })
	if err != nil {
		return false
	}
	p, err := v.Verify(ctx, string(bytes.TrimSpace(b)))
	return err == nil && p.Has(role)
}

// writeFile replaces path with b atomically (a reader never sees half a
// token), with mode perm.
func writeFile(path string, b []byte, perm fs.FileMode) error {
	tmp := path + ".new"
	if err := os.WriteFile(tmp, b, perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp, perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
