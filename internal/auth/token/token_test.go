package token

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTokenClient(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	file := filepath.Join(t.TempDir(), "token")
	write := func(s string) {
		if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("first\n")
	hc := Config{File: file}.Client(srv.Client())
	get := func(auth string) {
		req, _ := http.NewRequestWithContext(t.Context(), "GET", srv.URL, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	get("")
	write("second-longer")
	get("")
	get("Bearer mine")
	want := []string{"Bearer first", "Bearer second-longer", "Bearer mine"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("sent %q, want %q", got, want)
	}
	if c := (Config{}).Client(nil); c != nil {
		t.Errorf("no token: client %v, want nil (the caller's default)", c)
	}
}
