package sealed

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSealOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "key")
	b, err := LoadKey(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 || st.Size() != KeySize {
		t.Fatalf("key file: %v %v", st, err)
	}
	s, err := b.Seal("x3000c0s1b0", []byte("secret"))
	if err != nil {
		t.Fatal(err)
	}
	again, err := LoadKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := again.Open("x3000c0s1b0", s); err != nil || string(got) != "secret" {
		t.Fatalf("Open = %q, %v", got, err)
	}
	if _, err := again.Open("x3000c0s2b0", s); err == nil {
		t.Error("a value sealed for one owner opened for another")
	}
	if _, err := again.Open("x3000c0s1b0", s[:5]); err == nil {
		t.Error("a truncated value opened")
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKey(path); err == nil {
		t.Error("a key file others can read was accepted")
	}
}
