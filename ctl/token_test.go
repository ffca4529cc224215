package ctl_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

// TestToken: the CLI sends the token of -token-file, else of $HMS_TOKEN,
// to the daemons.
func TestToken(t *testing.T) {
	got := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"Components":[]}`))
	}))
	t.Cleanup(srv.Close)
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The user's config names a token file relative to itself; the
	// system's holds a token.
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".config", "hms"), 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(home, ".config", "hms", "admin.token"), []byte("from-user-config\n"), 0o600)
	os.WriteFile(filepath.Join(home, ".config", "hms", "config.yaml"), []byte("token-file: admin.token\n"), 0o600)
	system := filepath.Join(t.TempDir(), "config.yaml")
	os.WriteFile(system, []byte("token: from-system-config\n"), 0o600)
	for _, tt := range []struct {
		env, home, system string
		args              []string
		want              string
	}{
		{env: "from-env", want: "Bearer from-env"},
		{env: "from-env", args: []string{"-token-file", file}, want: "Bearer from-file"},
		{want: ""},
		{env: "from-env", home: home, system: system, want: "Bearer from-env"},
		{home: home, system: system, want: "Bearer from-user-config"},
		{system: system, want: "Bearer from-system-config"},
	} {
		if tt.home == "" {
			tt.home = t.TempDir()
		}
		r := runWith(t, map[string]string{"HMS_TOKEN": tt.env, "HOME": tt.home}, tt.system,
			append([]string{"get", "nodes", "-hsm-url", srv.URL}, tt.args...)...)
		if r.err != nil {
			t.Fatalf("hms get nodes %v: %v (%s)", tt.args, r.err, r.stderr)
		}
		if a := <-got; a != tt.want {
			t.Errorf("env %q args %v: Authorization %q, want %q", tt.env, tt.args, a, tt.want)
		}
	}
}
