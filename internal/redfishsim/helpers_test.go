package redfishsim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
)

const (
	testUser = "admin"
	testPass = "s3cret"
)

// mockup loads one of the DMTF mockups copied into testdata.
func mockup(t testing.TB, name string) *Tree {
	t.Helper()
	tree, err := LoadMockup(filepath.Join("testdata", "mockups", name))
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// startBMC serves a BMC over an httptest server.
func startBMC(t testing.TB, cfg Config) (*BMC, *httptest.Server) {
	t.Helper()
	if cfg.User == "" {
		cfg.User, cfg.Password = testUser, testPass
	}
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(b.Handler())
	t.Cleanup(srv.Close)
	return b, srv
}

// req describes one request in a table.
type req struct {
	method, path, body string
	user, pass         string // Basic auth when user != ""
	token              string // X-Auth-Token when not empty
	header             map[string]string
}

// do sends rq and returns the response with its body read and closed.
func do(t testing.TB, srv *httptest.Server, rq req) (*http.Response, []byte) {
	t.Helper()
	var body io.Reader
	if rq.body != "" {
		body = bytes.NewBufferString(rq.body)
	}
	r, err := http.NewRequestWithContext(t.Context(), rq.method, srv.URL+rq.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if rq.user != "" {
		r.SetBasicAuth(rq.user, rq.pass)
	}
	if rq.token != "" {
		r.Header.Set("X-Auth-Token", rq.token)
	}
	for k, v := range rq.header {
		r.Header.Set(k, v)
	}
	resp, err := srv.Client().Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, out
}

// get fetches path with the test credentials and decodes the JSON object.
func get(t testing.TB, srv *httptest.Server, path string) map[string]any {
	t.Helper()
	return getAs(t, srv, path, testUser, testPass)
}

// getAs is get with the given credentials.
func getAs(t testing.TB, srv *httptest.Server, path, user, pass string) map[string]any {
	t.Helper()
	resp, body := do(t, srv, req{method: "GET", path: path, user: user, pass: pass})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("GET %s: %v in %q", path, err, body)
	}
	return m
}

// errorCode is the error.code of a Redfish error body, or "".
func errorCode(body []byte) string {
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	_ = json.Unmarshal(body, &e)
	return e.Error.Code
}

func jsonMap(t testing.TB, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("%v in %q", err, body)
	}
	return m
}

// fmtSscanHex parses two hex digits.
func fmtSscanHex(s string, b *byte) (int, error) { return fmt.Sscanf(s, "%02x", b) }

// containsJSON reports whether body contains the compact JSON fragment.
func containsJSON(body []byte, fragment string) bool { return bytes.Contains(body, []byte(fragment)) }
