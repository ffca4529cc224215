package auth

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestPrepareLocal: the first start makes both keys and an admin token
// (0600) that the daemons' configuration accepts; a later start keeps
// them; the token is minted again when near its end or when its key was
// deleted.
func TestPrepareLocal(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "auth")
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	l, err := PrepareLocal(t.Context(), dir, clock)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Made) != 4 {
		t.Errorf("first start made %v, want both keys and both tokens", l.Made)
	}
	for _, p := range []string{l.SigningKey, l.NodeKey, l.AdminToken, l.SCNToken} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, %v; want mode 0600", p, fi, err)
		}
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("%s: %v, %v; want mode 0700", dir, fi, err)
	}
	read := func(path string) Principal {
		t.Helper()
		b, _ := os.ReadFile(path)
		v, err := NewVerifier(Config{KeyFile: l.SigningJWKS, NodeKeys: l.NodeJWKS}, nil, clock)
		if err != nil {
			t.Fatal(err)
		}
		p, err := v.Verify(t.Context(), string(b[:len(b)-1]))
		if err != nil {
			t.Fatalf("admin token: %v", err)
		}
		return p
	}
	if p := read(l.AdminToken); !p.Has(Admin) {
		t.Errorf("admin token grants %+v", p)
	}
	if p := read(l.SCNToken); len(p.Roles) != 1 || !p.Has(SCN) {
		t.Errorf("SCN token grants %+v", p)
	}
	first, _ := os.ReadFile(l.AdminToken)
	if l, err = PrepareLocal(t.Context(), dir, clock); err != nil || len(l.Made) != 0 {
		t.Errorf("second start: made %v, %v; want nothing", l.Made, err)
	}
	now = now.Add(AdminTokenTTL - AdminTokenRenew + time.Hour)
	if l, err = PrepareLocal(t.Context(), dir, clock); err != nil || len(l.Made) != 2 || l.Made[0] != l.AdminToken {
		t.Errorf("start near the tokens' end: made %v, %v; want both tokens", l.Made, err)
	}
	if again, _ := os.ReadFile(l.AdminToken); string(again) == string(first) {
		t.Error("the admin token was not minted again")
	}
	os.Remove(l.SigningKey)
	if l, err = PrepareLocal(t.Context(), dir, clock); err != nil || len(l.Made) != 3 {
		t.Errorf("start after the signing key was deleted: made %v, %v", l.Made, err)
	}
	read(l.AdminToken)
}
