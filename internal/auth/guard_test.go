package auth

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hmsuite/hms/internal/problem"
)

// testTable is a daemon's table in miniature.
func testTable() Table {
	return Table{Daemon: "testd", Routes: []Route{
		{Pattern: "GET /v1/health", Access: Open()},
		{Pattern: "GET /v1/things", Access: Read()},
		{Pattern: "POST /v1/things", Access: Write()},
		{Pattern: "POST /v1/loadstate", Access: AdminOnly()},
		{Pattern: "GET /v1/things/{xname}", Access: Read().OrNode(PathXname("xname"), "path")},
		{Pattern: "POST /v1/beat", Access: Write().OrNode(BodyXname("Component", nil), "body Component")},
		{Pattern: "GET /v1/script", Access: Write().OrNode(QueryXname("name"), "query name")},
	}}
}

// recorder is the daemon behind the guard: it records what reached it.
type recorder struct {
	calls []string
	body  string
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rec.calls = append(rec.calls, r.Method+" "+r.URL.Path)
	rec.body = string(b)
	w.WriteHeader(http.StatusNoContent)
}

func TestGuard(t *testing.T) {
	is := newTestIssuer(t)
	tok := func(sub string, roles ...string) string {
		return is.sign("ec", claims{"sub": sub, "roles": roles})
	}
	tests := []struct {
		name, method, path, body, token string
		want                            int
	}{
		{name: "health open", method: "GET", path: "/v1/health", want: 204},
		{name: "no token", method: "GET", path: "/v1/things", want: 401},
		{name: "expired token", method: "GET", path: "/v1/things", want: 401,
			token: is.sign("ec", claims{"exp": is.now.Add(-5 * time.Minute).Unix(), "roles": []string{"admin"}})},
		{name: "wrong audience", method: "POST", path: "/v1/loadstate", want: 401,
			token: is.sign("rsa", claims{"aud": "elsewhere", "roles": []string{"admin"}})},
		{name: "viewer reads", method: "GET", path: "/v1/things", token: tok("v", "viewer"), want: 204},
		{name: "viewer may not write", method: "POST", path: "/v1/things", token: tok("v", "viewer"), want: 403},
		{name: "operator writes", method: "POST", path: "/v1/things", token: tok("o", "operator"), want: 204},
		{name: "operator may not load", method: "POST", path: "/v1/loadstate", token: tok("o", "operator"), want: 403},
		{name: "admin loads", method: "POST", path: "/v1/loadstate", token: tok("a", "admin"), want: 204},
		{name: "no role", method: "GET", path: "/v1/things", token: tok("x"), want: 403},
		{name: "unlisted route is admin-only", method: "GET", path: "/v1/secret", token: tok("v", "viewer", "operator"), want: 403},
		{name: "unlisted route, admin", method: "GET", path: "/v1/secret", token: tok("a", "admin"), want: 204},
		{name: "node reads itself", method: "GET", path: "/v1/things/x1000c0s0b0n0", token: tok("x1000c0s0b0n0", "node"), want: 204},
		{name: "node reads another", method: "GET", path: "/v1/things/x1000c0s0b0n1", token: tok("x1000c0s0b0n0", "node"), want: 403},
		{name: "node lists", method: "GET", path: "/v1/things", token: tok("x1000c0s0b0n0", "node"), want: 403},
		{name: "node beats for itself", method: "POST", path: "/v1/beat", body: `{"Component":"x1000c0s0b0n0","Status":"OK"}`,
			token: tok("x1000c0s0b0n0", "node"), want: 204},
		{name: "node beats for another", method: "POST", path: "/v1/beat", body: `{"Component":"x1000c0s0b0n1"}`,
			token: tok("x1000c0s0b0n0", "node"), want: 403},
		{name: "node script, own name", method: "GET", path: "/v1/script?name=x1000c0s0b0n0", token: tok("x1000c0s0b0n0", "node"), want: 204},
		{name: "node script by mac", method: "GET", path: "/v1/script?mac=a4:bf:01:02:03:04", token: tok("x1000c0s0b0n0", "node"), want: 403},
		{name: "node script, name twice", method: "GET", path: "/v1/script?name=x1000c0s0b0n0&name=x1000c0s0b0n1",
			token: tok("x1000c0s0b0n0", "node"), want: 403},
		{name: "basic auth is no bearer", method: "GET", path: "/v1/things", token: "-basic", want: 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			g := newGuard(is.verifier(is.config()), false, testTable(), rec, nil, prometheus.NewRegistry())
			req := httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.body))
			switch tt.token {
			case "":
			case "-basic":
				req.SetBasicAuth("root", "initial0")
			default:
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			w := httptest.NewRecorder()
			g.ServeHTTP(w, req)
			if w.Code != tt.want {
				t.Fatalf("status %d, want %d; body %s", w.Code, tt.want, w.Body)
			}
			if tt.want >= 400 {
				checkRefusal(t, w, len(rec.calls))
				return
			}
			if len(rec.calls) != 1 || rec.body != tt.body {
				t.Errorf("daemon got calls %v body %q, want one call with body %q", rec.calls, rec.body, tt.body)
			}
		})
	}
}

// checkRefusal asserts a refusal is problem+json with a Bearer challenge and
// never reached the daemon.
func checkRefusal(t *testing.T, w *httptest.ResponseRecorder, calls int) {
	t.Helper()
	if calls != 0 {
		t.Errorf("refused request reached the daemon")
	}
	if ct := w.Header().Get("Content-Type"); ct != problem.ContentType {
		t.Errorf("Content-Type %q, want %q", ct, problem.ContentType)
	}
	var d problem.Details
	if err := json.Unmarshal(w.Body.Bytes(), &d); err != nil || d.Status != w.Code || d.Detail == "" {
		t.Errorf("problem %+v (%v) for status %d", d, err, w.Code)
	}
	ch := w.Header().Get("WWW-Authenticate")
	if !strings.HasPrefix(ch, `Bearer realm="testd"`) {
		t.Errorf("WWW-Authenticate %q", ch)
	}
	if w.Code == http.StatusForbidden && !strings.Contains(ch, "insufficient_scope") {
		t.Errorf("403 challenge %q lacks insufficient_scope", ch)
	}
}

func TestGuardShadow(t *testing.T) {
	is := newTestIssuer(t)
	var logs bytes.Buffer
	rec := &recorder{}
	g := newGuard(is.verifier(is.config()), true, testTable(), rec, slog.New(slog.NewTextHandler(&logs, nil)), nil)
	for _, tok := range []string{"", is.sign("rsa", claims{"roles": []string{"viewer"}})} {
		req := httptest.NewRequest("POST", "/v1/loadstate", nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		w := httptest.NewRecorder()
		g.ServeHTTP(w, req)
		if w.Code != http.StatusNoContent {
			t.Fatalf("shadow mode answered %d, want the daemon's 204", w.Code)
		}
	}
	if len(rec.calls) != 2 {
		t.Fatalf("daemon got %v, want both requests", rec.calls)
	}
	for _, want := range []string{"auth_shadow_refusal", "status=401", "status=403", "sub=alice"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("shadow log lacks %q:\n%s", want, logs.String())
		}
	}
}

func TestWrapOff(t *testing.T) {
	rec := &recorder{}
	h, err := Config{}.Wrap(rec, testTable(), nil, nil)
	if err != nil || h != http.Handler(rec) {
		t.Fatalf("Wrap with auth off = %v, %v; want the handler itself", h, err)
	}
}

func TestTableMissing(t *testing.T) {
	unlisted, stale := testTable().Missing([]string{"GET /v1/health", "GET /v1/things", "DELETE /v1/things"})
	if len(unlisted) != 1 || unlisted[0] != "DELETE /v1/things" || len(stale) != 5 {
		t.Errorf("Missing = %v, %v", unlisted, stale)
	}
	var b bytes.Buffer
	testTable().Print(&b)
	for _, want := range []string{"testd routes", "GET /v1/health", "open", "admin, operator, viewer, node(path)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("Print lacks %q:\n%s", want, b.String())
		}
	}
}
