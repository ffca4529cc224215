package token

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/hmsuite/hms/internal/cli"
)

// TestClientCredentials: the token is fetched from the token endpoint with
// the client's ID and secret, sent to the daemons, and reused while valid.
func TestClientCredentials(t *testing.T) {
	var fetches atomic.Int32
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, secret, ok := r.BasicAuth()
		if r.Method != "POST" || r.FormValue("grant_type") != "client_credentials" || !ok || id != "hsm" || secret != "s3cret" || r.FormValue("scope") != "hms" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		fetches.Add(1)
		io.WriteString(w, `{"access_token":"fetched","token_type":"Bearer","expires_in":3600}`)
	}))
	defer idp.Close()
	var got []string
	api := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Authorization"))
	}))
	defer api.Close()
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("s3cret\n"), 0o600)

	var out io.Writer = io.Discard
	f := cli.NewFlagSet("hsm", func(string) string { return "" }, out)
	fl := Register(f)
	if err := f.Parse([]string{"-oauth-token-url", idp.URL, "-oauth-client-id", "hsm", "-oauth-client-secret-file", secret, "-oauth-scope", "hms"}); err != nil {
		t.Fatal(err)
	}
	c, err := fl.Config()
	if err != nil || !c.Set() {
		t.Fatalf("config %+v, %v", c, err)
	}
	hc := c.Client(nil)
	for range 2 {
		resp, err := hc.Get(api.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if len(got) != 2 || got[0] != "Bearer fetched" || got[1] != "Bearer fetched" || fetches.Load() != 1 {
		t.Errorf("sent %v after %d fetches; want the fetched token twice after one", got, fetches.Load())
	}
	c.OAuth.ClientID = "other"
	if _, err := c.Client(nil).Get(api.URL); err == nil {
		t.Error("a refused client got through")
	}

	for _, args := range [][]string{
		{"-oauth-token-url", idp.URL},
		{"-oauth-token-url", idp.URL, "-oauth-client-id", "hsm", "-oauth-client-secret-file", "/nonexistent"},
		{"-oauth-token-url", idp.URL, "-oauth-client-id", "hsm", "-oauth-client-secret-file", secret, "-token", "x"},
	} {
		f := cli.NewFlagSet("hsm", func(string) string { return "" }, out)
		fl := Register(f)
		if err := f.Parse(args); err != nil {
			t.Fatal(err)
		}
		if _, err := fl.Config(); !errors.As(err, new(*cli.UsageError)) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}
