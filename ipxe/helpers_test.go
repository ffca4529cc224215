package ipxe

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/testpeer"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// fixedNow is the clock of the test services.
var fixedNow = time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC)

// pg is the package's PostgreSQL server, started by the first test that
// asks for a database on it (pg.EachDB).
var pg = testpeer.NewPostgres()

func TestMain(m *testing.M) { pg.Main(m) }

// harness is one BSS service over a real store (SQLite, or PostgreSQL
// through newHarnessOn), its cache seeded by hand (no HSM), and its API on
// an httptest server.
type harness struct {
	svc *Service
	srv *httptest.Server
}

// newHarness starts the harness on SQLite; opts change the service's Config.
func newHarness(t testing.TB, opts ...func(*Config)) *harness {
	t.Helper()
	return newHarnessOn(t, testpeer.SQLite(t), opts...)
}

// newHarnessOn is newHarness with the store at db (a SQLite file or a
// PostgreSQL URL).
func newHarnessOn(t testing.TB, db string, opts ...func(*Config)) *harness {
	t.Helper()
	store, err := OpenStore(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	cfg := Config{Script: ScriptConfig{AdvertiseURL: "http://10.92.100.81:8888"}, Now: func() time.Time { return fixedNow }}
	for _, o := range opts {
		o(&cfg)
	}
	svc, err := New(t.Context(), store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(NewAPI(svc, nil, nil, Version).Handler())
	t.Cleanup(srv.Close)
	return &harness{svc: svc, srv: srv}
}

// nodes seeds the cache with nodes.
func (h *harness) nodes(nodes ...*Node) {
	m := map[string]*Node{}
	for _, n := range nodes {
		m[n.ID] = n
	}
	h.svc.cache.replaceAll(m)
}

func node(id, role, subRole string, nid int, macs []string, ips ...string) *Node {
	n := &Node{Component: Component{ID: id, Type: "Node", State: "Ready", Role: role, SubRole: subRole, NID: &nid}}
	for _, m := range macs {
		n.MACs = append(n.MACs, normMAC(m))
	}
	for _, ip := range ips {
		addInterface(n, EthernetInterface{IPAddresses: []IPAddressMapping{{IPAddress: ip}}})
	}
	return n
}

// do sends one request and returns the status, headers and body.
func (h *harness) do(t testing.TB, method, path, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, h.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := h.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// mustDo is do that requires want.
func (h *harness) mustDo(t testing.TB, method, path, body string, want int) (http.Header, string) {
	t.Helper()
	st, hdr, b := h.do(t, method, path, body)
	if st != want {
		t.Fatalf("%s %s: status %d, want %d; body %s", method, path, st, want, b)
	}
	return hdr, b
}

// golden compares got with testdata/name.golden (rewritten with -update).
func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(want, []byte(got)) {
		t.Errorf("%s differs from %s:\n--- got\n%s--- want\n%s", name, p, got, want)
	}
}

// waitFor waits, without sleeping on the clock, until cond holds after a
// change of the cache, or fails after a bound.
func waitFor(t *testing.T, c *Cache, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for {
		ch := c.Changed()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func newRecorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
