// Package hsmtest is the test harness HSM's packages share: the shared core
// over a temporary SQLite database, the resource families' routes served over
// it, a settable clock and seed data. It imports the families but not
// statemgr nor inventory, so statemgr's and inventory's own tests use it too.
package hsmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/statemgr/component"
	"github.com/hmsuite/hms/statemgr/ethernet"
	"github.com/hmsuite/hms/statemgr/group"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
	"github.com/hmsuite/hms/statemgr/lock"
	"github.com/hmsuite/hms/statemgr/scn"
)

// NewStore is NewStoreOn a SQLite file.
func NewStore(t testing.TB, cfg core.Config) (*core.Store, string) {
	t.Helper()
	return NewStoreOn(t, testpeer.SQLite, cfg)
}

// Server is an HSM API over a store, served by an httptest server.
type Server struct {
	// Store is the store the API serves.
	Store  *core.Store
	t      testing.TB
	srv    *httptest.Server
	client *http.Client
	base   string
}

// NewServer serves the API over a fresh store (no Redfish routes).
func NewServer(t testing.TB) *Server {
	t.Helper()
	return NewServerWith(t, core.Config{})
}

// NewServerWith serves the API over a fresh store opened with cfg.
func NewServerWith(t testing.TB, cfg core.Config) *Server {
	t.Helper()
	return NewServerWithOn(t, testpeer.SQLite, cfg)
}

// Mux returns the routes of the resource families over s, as the daemon
// mounts them, less /service and the Redfish inventory (which needs a
// discovery; its tests add it to this mux).
func Mux(s *core.Store) *httpserver.Mux {
	log := slog.New(slog.DiscardHandler)
	mux := httpserver.NewMux(problem.Style{NoInstance: true})
	component.NewAPI(component.NewStore(s), log).Routes(mux)
	ethernet.NewAPI(ethernet.NewStore(s.DB, s.Now), log).Routes(mux)
	scn.NewAPI(scn.NewStore(s), log).Routes(mux)
	group.NewAPI(group.NewStore(s), log).Routes(mux)
	lock.NewAPI(lock.NewStore(s), log).Routes(mux)
	return mux
}

// Serve serves Mux(s) until the test ends.
func Serve(t testing.TB, s *core.Store) *Server {
	t.Helper()
	return ServeHandler(t, s, Mux(s))
}

// ServeHandler serves h, an API over s, until the test ends.
func ServeHandler(t testing.TB, s *core.Store, h http.Handler) *Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &Server{Store: s, t: t, srv: srv, client: srv.Client(), base: srv.URL}
}

// InProcess is a Server that reaches h without a socket, through client's
// transport (inside a synctest bubble, where sockets cannot be used); base is
// the URL client answers at.
func InProcess(t testing.TB, s *core.Store, client *http.Client, base string) *Server {
	return &Server{Store: s, t: t, client: client, base: base}
}

// For returns a's server as seen by test t (a fuzz target's inner test
// shares the server its outer test set up).
func (a *Server) For(t testing.TB) *Server {
	c := *a
	c.t = t
	return &c
}

// Do sends body (a string is sent as is, anything else as JSON) to path
// under /hsm/v2 and returns the status and the response body.
func (a *Server) Do(method, path string, body any) (int, []byte) {
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

// Must is Do that fails the test unless the status is want.
func (a *Server) Must(want int, method, path string, body any) []byte {
	a.t.Helper()
	got, out := a.Do(method, path, body)
	if got != want {
		a.t.Fatalf("%s %s: status %d, want %d; body %s", method, path, got, want, out)
	}
	return out
}

// List GETs a component listing (query is "" or "?...") and returns the
// components.
func (a *Server) List(query string) []hsm.Component {
	a.t.Helper()
	var l hsm.ComponentList
	if err := json.Unmarshal(a.Must(200, "GET", "/State/Components"+query, nil), &l); err != nil {
		a.t.Fatal(err)
	}
	return l.Components
}

// Problem sends body and fails the test unless the answer is a problem
// document of status whose detail is exactly detail.
func (a *Server) Problem(status int, method, path string, body any, detail string) {
	a.t.Helper()
	got, out := a.Do(method, path, body)
	var p struct {
		Status int    `json:"status"`
		Detail string `json:"detail"`
	}
	if err := json.Unmarshal(out, &p); err != nil || got != status || p.Status != status || p.Detail != detail {
		a.t.Errorf("%s %s: %d %s, want %d with detail %q", method, path, got, out, status, detail)
	}
}

// Clock is a settable clock for stores under test.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a Clock reading t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now reads the clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Add moves the clock by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Nodes returns n Off nodes, eight per slot, starting in cabinet offset.
func Nodes(n int, offset int) []hsm.Component {
	out := make([]hsm.Component, n)
	for i := range out {
		out[i] = hsm.Component{ID: fmt.Sprintf("x%dc0s0b0n%d", offset+i/8, i%8), State: "Off"}
	}
	return out
}

// IDsOf returns the IDs of cs, in order.
func IDsOf(cs []hsm.Component) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

// CPUTime is the CPU time this process has used, for benchmarks that report
// CPU per operation.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Exact sends body and fails the test unless the answer is status with
// exactly the body want (a trailing newline included).
func (a *Server) Exact(status int, method, path string, body any, want string) {
	a.t.Helper()
	got, out := a.Do(method, path, body)
	if got != status || string(out) != want {
		a.t.Errorf("%s %s: %d %q, want %d %q", method, path, got, out, status, want)
	}
}

// Close stops serving before the test ends (it stops at cleanup anyway).
func (a *Server) Close() {
	if a.srv != nil {
		a.srv.Close()
	}
}

// Seed creates five components (four nodes of two slots and a BMC) with
// varied State, Flag, Role, SubRole, NID, Arch, Class and Enabled.
func Seed(t *testing.T, a *Server) {
	t.Helper()
	a.Must(204, "POST", "/State/Components", map[string]any{"Components": []map[string]any{
		{"ID": "x0c0s0b0n0", "State": "Ready", "NID": 1, "Role": "Compute", "Arch": "X86", "Class": "River"},
		{"ID": "x0c0s0b0n1", "State": "off", "NID": 2, "Role": "compute"},
		{"ID": "X0c0s1b0n0", "State": "On", "NID": 3, "Role": "Service", "SubRole": "master", "SoftwareStatus": "AdminDown"},
		{"ID": "x0c0s1b0n1", "State": "Ready", "Flag": "warn", "NID": 4, "Role": "Compute", "Enabled": false},
		{"ID": "x0c0s0b0", "State": "Ready"},
	}})
}
