package statemgr

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hmsuite/hms/statemgr/hsm"
)

// fakeClock is a settable clock for stores under test.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newTestStore(t testing.TB) (*Store, string) {
	t.Helper()
	return newTestStoreWith(t, StoreConfig{})
}

func newTestStoreWith(t testing.TB, cfg StoreConfig) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hsm.db")
	s, err := OpenStore(t.Context(), path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

// apiServer is a test API over a fresh store. srv is nil when the API is
// served in process (inside a synctest bubble, where sockets cannot be).
type apiServer struct {
	t      testing.TB
	store  *Store
	srv    *httptest.Server
	client *http.Client
	base   string
}

func newAPIServer(t testing.TB) *apiServer {
	t.Helper()
	return newAPIServerWith(t, StoreConfig{})
}

func newAPIServerWith(t testing.TB, cfg StoreConfig) *apiServer {
	t.Helper()
	s, _ := newTestStoreWith(t, cfg)
	srv := httptest.NewServer(NewAPI(s, slog.New(slog.DiscardHandler), nil).Handler())
	t.Cleanup(srv.Close)
	return &apiServer{t: t, store: s, srv: srv, client: srv.Client(), base: srv.URL}
}

// do sends body (a string is sent as is, anything else as JSON) and returns
// the status and the response body.
func (a *apiServer) do(method, path string, body any) (int, []byte) {
	a.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			a.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequestWithContext(a.t.Context(), method, a.base+Base+path, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	resp, err := a.client.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		a.t.Fatal(err)
	}
	return resp.StatusCode, out
}

// must is do that fails the test unless the status is want.
func (a *apiServer) must(want int, method, path string, body any) []byte {
	a.t.Helper()
	got, out := a.do(method, path, body)
	if got != want {
		a.t.Fatalf("%s %s: status %d, want %d; body %s", method, path, got, want, out)
	}
	return out
}

// list GETs a component listing and returns the components.
func (a *apiServer) list(query string) []hsm.Component {
	a.t.Helper()
	var l hsm.ComponentList
	if err := json.Unmarshal(a.must(200, "GET", "/State/Components"+query, nil), &l); err != nil {
		a.t.Fatal(err)
	}
	return l.Components
}

func ids(cs []hsm.Component) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// exact sends body and fails the test unless the answer is status with
// exactly the body want (a trailing newline included).
func (a *apiServer) exact(status int, method, path string, body any, want string) {
	a.t.Helper()
	got, out := a.do(method, path, body)
	if got != status || string(out) != want {
		a.t.Errorf("%s %s: %d %q, want %d %q", method, path, got, out, status, want)
	}
}

// problem sends body and fails the test unless the answer is a problem
// document of status whose detail is exactly detail.
func (a *apiServer) problem(status int, method, path string, body any, detail string) {
	a.t.Helper()
	got, out := a.do(method, path, body)
	var p struct {
		Status int    `json:"status"`
		Detail string `json:"detail"`
	}
	if err := json.Unmarshal(out, &p); err != nil || got != status || p.Status != status || p.Detail != detail {
		a.t.Errorf("%s %s: %d %s, want %d with detail %q", method, path, got, out, status, detail)
	}
}

// seed creates the five components hsmtest.Seed does.
func seed(t *testing.T, a *apiServer) {
	t.Helper()
	a.must(204, "POST", "/State/Components", map[string]any{"Components": []map[string]any{
		{"ID": "x0c0s0b0n0", "State": "Ready", "NID": 1, "Role": "Compute", "Arch": "X86", "Class": "River"},
		{"ID": "x0c0s0b0n1", "State": "off", "NID": 2, "Role": "compute"},
		{"ID": "X0c0s1b0n0", "State": "On", "NID": 3, "Role": "Service", "SubRole": "master", "SoftwareStatus": "AdminDown"},
		{"ID": "x0c0s1b0n1", "State": "Ready", "Flag": "warn", "NID": 4, "Role": "Compute", "Enabled": false},
		{"ID": "x0c0s0b0", "State": "Ready"},
	}})
}
