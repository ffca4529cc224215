package redfish

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// mockupDir holds the DMTF mockups, with their licence. One copy serves the
// simulator's tests and these.
const mockupDir = "../../internal/redfishsim/testdata/mockups"

// mockup serves a DMTF short-form mockup: GET /redfish/v1/<p> answers with
// <mockupDir>/<name>/<p>/index.json. Like a BMC, it leaves the service
// root open and, when user is set, wants basic auth everywhere else.
type mockup struct {
	dir        string
	user, pass string
	rootAuth   bool // protect the service root too
	// edit, when set, may rewrite (or drop, by returning nil) a resource.
	edit func(p string, doc map[string]any) map[string]any
	// raw, when set and returning ok, answers p with its bytes verbatim.
	raw func(p string) ([]byte, bool)
}

func newMockup(name string) *mockup {
	return &mockup{dir: filepath.Join(mockupDir, name)}
}

func (m *mockup) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		http.Error(w, "read-only mockup", http.StatusMethodNotAllowed)
		return
	}
	p := path.Clean("/" + strings.TrimSuffix(r.URL.Path, "/"))
	if p != "/redfish/v1" && !strings.HasPrefix(p, "/redfish/v1/") {
		http.NotFound(w, r)
		return
	}
	if m.user != "" && (p != "/redfish/v1" || m.rootAuth) {
		if u, pw, ok := r.BasicAuth(); !ok || u != m.user || pw != m.pass {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"error":{"code":"Base.1.0.InsufficientPrivilege","message":"bad credentials"}}`)
			return
		}
	}
	if m.raw != nil {
		if b, ok := m.raw(p); ok {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(b)
			return
		}
	}
	b, err := os.ReadFile(filepath.Join(m.dir, filepath.FromSlash(strings.TrimPrefix(p, "/redfish/v1")), "index.json"))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	if m.edit != nil {
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if doc = m.edit(p, doc); doc == nil {
			http.NotFound(w, r)
			return
		}
		b, _ = json.Marshal(doc)
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// serve starts h on a loopback listener and returns a client whose dialer
// sends every connection there, whatever host name the URL names, so tests
// can use stable BMC host names.
func serve(t testing.TB, h http.Handler) (*httptest.Server, *http.Client) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return srv, &http.Client{Transport: tr}
}

// inProcess is a RoundTripper that calls a handler directly, without
// sockets, so walks can run inside a synctest bubble.
type inProcess struct{ h http.Handler }

func (p inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	p.h.ServeHTTP(rec, r)
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}

// bodyCounter wraps a transport and counts response bodies opened and closed,
// independently of the walker's own bookkeeping.
type bodyCounter struct {
	base http.RoundTripper

	mu                    sync.Mutex
	opened, closed        int
	inFlight, maxInFlight int
}

func (c *bodyCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.inFlight++
	c.maxInFlight = max(c.maxInFlight, c.inFlight)
	c.mu.Unlock()
	resp, err := c.base.RoundTrip(r)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.inFlight--
		return nil, err
	}
	c.opened++
	resp.Body = &countedBody{ReadCloser: resp.Body, c: c}
	return resp, nil
}

type countedBody struct {
	io.ReadCloser
	c    *bodyCounter
	once sync.Once
}

func (b *countedBody) Close() error {
	b.once.Do(func() {
		b.c.mu.Lock()
		b.c.closed++
		b.c.inFlight--
		b.c.mu.Unlock()
	})
	return b.ReadCloser.Close()
}
