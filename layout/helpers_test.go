package layout

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/testpeer"
)

// testNow is the fixed clock of the tests.
// testNow has nanoseconds, of which the wire keeps the microseconds.
var testNow = time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.UTC)

// pg is the package's PostgreSQL server, started by the first test that
// asks for a database on it (pg.EachDB).
var pg = testpeer.NewPostgres()

func TestMain(m *testing.M) { pg.Main(m) }

// testEnv is an SLS API on a real database behind an httptest server.
type testEnv struct {
	t     *testing.T
	store *Store
	api   *API
	url   string // base URL of the server
	logs  *bytes.Buffer
}

// newTestEnv is newTestEnvOn a SQLite file.
func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	return newTestEnvOn(t, filepath.Join(t.TempDir(), "sls.db"))
}

// newTestEnvOn is a testEnv on the database db (a file or a URL).
func newTestEnvOn(t *testing.T, db string) *testEnv {
	t.Helper()
	store, err := OpenStore(t.Context(), db, func() time.Time { return testNow })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	logs := &bytes.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	reg := httpserver.NewRegistry()
	api := NewAPI(store, log, reg)
	// The real server, so its request logging is part of what tests see.
	srv, err := httpserver.Listen("127.0.0.1:0", api.Handler(), log, reg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server: %v", err)
		}
	})
	return &testEnv{t: t, store: store, api: api, url: srv.URL(), logs: logs}
}

// do sends a request with an optional JSON body and returns the status and body.
func (e *testEnv) do(method, path, body string) (int, string) {
	e.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(e.t.Context(), method, e.url+path, r)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return e.send(req)
}

func (e *testEnv) send(req *http.Request) (int, string) {
	e.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// load posts dump as the multipart field sls_dump.
func (e *testEnv) load(dump []byte) (int, string) {
	e.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("sls_dump", "dump.json")
	fw.Write(dump)
	mw.Close()
	req, _ := http.NewRequestWithContext(e.t.Context(), "POST", e.url+"/v1/loadstate", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return e.send(req)
}

// loadFile loads a file of testdata and fails the test unless it is
// accepted with the shipped answer: 204, no body.
func (e *testEnv) loadFile(name string) {
	e.t.Helper()
	if code, body := e.load(readTestdata(e.t, name)); code != http.StatusNoContent || body != "" {
		e.t.Fatalf("load %s: %d %s", name, code, body)
	}
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// xnames returns the Xname of every object in a JSON array of hardware.
func xnames(t *testing.T, body string) []string {
	t.Helper()
	var hs []Hardware
	if err := json.Unmarshal([]byte(body), &hs); err != nil {
		t.Fatalf("decode %q: %v", body, err)
	}
	out := []string{}
	for _, h := range hs {
		out = append(out, h.Xname)
	}
	return out
}

// detail returns the detail of a problem+json body.
func detail(t *testing.T, body string) string {
	t.Helper()
	var d struct {
		Detail string `json:"detail"`
	}
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		t.Fatalf("not a problem body: %q", body)
	}
	return d.Detail
}

func (e *testEnv) version() Version {
	e.t.Helper()
	return e.store.Version()
}
