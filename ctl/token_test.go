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
	for _, tt := range []struct {
		env  string
		args []string
		want string
	}{
		{env: "from-env", want: "Bearer from-env"},
		{env: "from-env", args: []string{"-token-file", file}, want: "Bearer from-file"},
		{want: ""},
	} {
		r := runWith(t, map[string]string{"HMS_TOKEN": tt.env, "HOME": t.TempDir()}, "",
			append([]string{"get", "nodes", "-hsm-url", srv.URL}, tt.args...)...)
		if r.err != nil {
			t.Fatalf("hms get nodes %v: %v (%s)", tt.args, r.err, r.stderr)
		}
		if a := <-got; a != tt.want {
			t.Errorf("env %q args %v: Authorization %q, want %q", tt.env, tt.args, a, tt.want)
		}
	}
}
