// Package hsmtest is the test harness HSM's packages share: a Store over a
// temporary SQLite database and the whole HSM API served over it.
package hsmtest

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmsuite/hms/statemgr"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// newStore opens a Store on a fresh database in t.TempDir, closed at cleanup,
// and returns it with the database's path.
func newStore(t testing.TB, cfg statemgr.StoreConfig) (*statemgr.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hsm.db")
	s, err := statemgr.OpenStore(t.Context(), path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

// Server is the HSM API over a fresh store, served by an httptest server.
type Server struct {
	t      testing.TB
	client *http.Client
	base   string
}

// NewServer serves the API over a fresh store (no Redfish routes).
func NewServer(t testing.TB) *Server {
	t.Helper()
	s, _ := newStore(t, statemgr.StoreConfig{})
	srv := httptest.NewServer(statemgr.NewAPI(s, slog.New(slog.DiscardHandler), nil).Handler())
	t.Cleanup(srv.Close)
	return &Server{t: t, client: srv.Client(), base: srv.URL}
}

// do sends body (a string is sent as is, anything else as JSON) to path
// under /hsm/v2 and returns the status and the response body.
func (a *Server) do(method, path string, body any) (int, []byte) {
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
	req, err := http.NewRequestWithContext(a.t.Context(), method, a.base+hsm.Base+path, rd)
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

// Must is do that fails the test unless the status is want.
func (a *Server) Must(want int, method, path string, body any) []byte {
	a.t.Helper()
	got, out := a.do(method, path, body)
	if got != want {
		a.t.Fatalf("%s %s: status %d, want %d; body %s", method, path, got, want, out)
	}
	return out
}

// Problem sends body and fails the test unless the answer is a problem
// document of status whose detail is exactly detail.
func (a *Server) Problem(status int, method, path string, body any, detail string) {
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
