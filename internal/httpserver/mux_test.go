package httpserver

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/problem"
)

func testMux() *Mux {
	m := NewMux(problem.Style{NoInstance: true})
	m.HandleFunc("GET /v1/hardware/{xname}", func(w http.ResponseWriter, r *http.Request) {
		WriteJSON(w, http.StatusOK, map[string]string{"Xname": r.PathValue("xname"), "Pattern": r.Pattern})
	})
	m.HandleFunc("DELETE /v1/hardware/{xname}", func(w http.ResponseWriter, r *http.Request) {})
	m.HandleFunc("POST /v1/loadstate", func(w http.ResponseWriter, r *http.Request) {})
	m.HandleFunc("POST /v1/fail", func(w http.ResponseWriter, r *http.Request) {
		problem.Write(w, r, nil, problem.Invalidf("bad body"))
	})
	return m
}

// TestMuxUnmatched: unknown paths are 404 and known paths under another
// method 405 with Allow, both as problem+json in the Mux's style, as are the
// problems its handlers write.
func TestMuxUnmatched(t *testing.T) {
	tests := []struct {
		method, path, allow, body string
		status                    int
	}{
		{method: "GET", path: "/v1/nothing", status: 404,
			body: `{"type":"about:blank","title":"Not Found","detail":"no route for /v1/nothing","status":404}` + "\n"},
		{method: "PUT", path: "/v1/hardware/x1", status: 405, allow: "GET, HEAD, DELETE",
			body: `{"type":"about:blank","title":"Method Not Allowed","detail":"method PUT not allowed on /v1/hardware/x1; allowed: GET, HEAD, DELETE","status":405}` + "\n"},
		{method: "GET", path: "/v1/loadstate", status: 405, allow: "POST",
			body: `{"type":"about:blank","title":"Method Not Allowed","detail":"method GET not allowed on /v1/loadstate; allowed: POST","status":405}` + "\n"},
		{method: "GET", path: "/v1/hardware/x1", status: 200,
			body: `{"Pattern":"GET /v1/hardware/{xname}","Xname":"x1"}` + "\n"},
		// A handler's problem.Write takes the Mux's style too.
		{method: "POST", path: "/v1/fail", status: 400,
			body: `{"type":"about:blank","title":"Bad Request","detail":"bad body","status":400}` + "\n"},
	}
	// Bare, the Mux puts its style in a copy of the request's context;
	// behind the server's middleware, on the response writer.
	m := testMux()
	handlers := map[string]http.Handler{
		"bare":         m,
		"instrumented": instrument(m, slog.New(slog.DiscardHandler), newMetrics(NewRegistry())),
	}
	for name, h := range handlers {
		for _, tt := range tests {
			t.Run(name+" "+tt.method+" "+tt.path, func(t *testing.T) {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
				if rec.Code != tt.status || rec.Header().Get("Allow") != tt.allow {
					t.Fatalf("status %d Allow %q, want %d %q", rec.Code, rec.Header().Get("Allow"), tt.status, tt.allow)
				}
				if got := rec.Body.String(); got != tt.body {
					t.Fatalf("body\n got %s\nwant %s", got, tt.body)
				}
			})
		}
	}
}

// TestStyledMuxKeepsRequest: behind the server's middleware a styled Mux
// hands its handlers the request itself, not a copy (a copy per request
// was a fifth of the bootscript's allocated bytes); a Mux nested in
// another shapes its handlers' problems in its own style, and the outer
// Mux's style is back once it returns.
func TestStyledMuxKeepsRequest(t *testing.T) {
	var outerReq, innerReq *http.Request
	inner := NewMux(problem.Style{Titles: map[int]string{400: "Inner"}})
	inner.HandleFunc("POST /v1/inner/fail", func(w http.ResponseWriter, r *http.Request) {
		innerReq = r
		problem.WriteStatus(w, r, http.StatusBadRequest, "inner")
	})
	outer := NewMux(problem.Style{NoInstance: true})
	outer.HandleFunc("POST /v1/inner/", func(w http.ResponseWriter, r *http.Request) {
		inner.ServeHTTP(w, r)
		problem.WriteStatus(w, r, http.StatusBadRequest, "outer")
	})
	h := instrument(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		outerReq = r
		outer.ServeHTTP(w, r)
	}), slog.New(slog.DiscardHandler), newMetrics(NewRegistry()))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/inner/fail", nil))
	if innerReq == nil || innerReq != outerReq {
		t.Errorf("the handler got a copy of the request (%p, want %p)", innerReq, outerReq)
	}
	want := `{"type":"about:blank","title":"Inner","detail":"inner","instance":"/v1/inner/fail","status":400}` + "\n" +
		`{"type":"about:blank","title":"Bad Request","detail":"outer","status":400}` + "\n"
	if got := rec.Body.String(); got != want {
		t.Errorf("bodies\n got %s\nwant %s", got, want)
	}
}

func TestMuxPatternsAndMatch(t *testing.T) {
	m := testMux()
	want := []string{"GET /v1/hardware/{xname}", "DELETE /v1/hardware/{xname}", "POST /v1/loadstate", "POST /v1/fail"}
	if d := cmp.Diff(want, m.Patterns()); d != "" {
		t.Fatalf("Patterns (-want +got):\n%s", d)
	}
	if got := m.Match(httptest.NewRequest("GET", "/v1/hardware/x3000", nil)); got != want[0] {
		t.Fatalf("Match = %q, want %q", got, want[0])
	}
	if got := m.Match(httptest.NewRequest("GET", "/v1/other", nil)); got != "" {
		t.Fatalf("Match of an unknown path = %q, want none", got)
	}
}

// TestWithPrefixes: a gateway path reaches the same route, with the same
// path values, as the daemon's own; near misses do not.
func TestWithPrefixes(t *testing.T) {
	h := WithPrefixes(testMux(), Prefix{Gateway: "/apis/sls/v1", Base: "/v1"})
	for _, tc := range []struct {
		path   string
		status int
	}{
		{path: "/apis/sls/v1/hardware/x1", status: 200},
		{path: "/v1/hardware/x1", status: 200},
		{path: "/apis/sls/v1x/hardware/x1", status: 404},
		{path: "/apis/smd/hsm/v2/hardware/x1", status: 404},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", tc.path, nil))
		if rec.Code != tc.status {
			t.Errorf("GET %s: %d, want %d", tc.path, rec.Code, tc.status)
		}
		if tc.status == 200 && rec.Body.String() != `{"Pattern":"GET /v1/hardware/{xname}","Xname":"x1"}`+"\n" {
			t.Errorf("GET %s: body %s", tc.path, rec.Body)
		}
	}
}

// TestStyledMuxRouteLabel: a Mux with a problem Style still reports the matched
// route to the metrics middleware (it routes a copy of the request).
func TestStyledMuxRouteLabel(t *testing.T) {
	m := NewMux(problem.Style{NoInstance: true})
	m.HandleFunc("GET /v1/things/{id}", func(w http.ResponseWriter, r *http.Request) {})
	reg := NewRegistry()
	h := instrument(m, slog.New(slog.DiscardHandler), newMetrics(reg))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/v1/things/7", nil))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, mf := range mfs {
		for _, mt := range mf.GetMetric() {
			for _, l := range mt.GetLabel() {
				if l.GetName() != "route" {
					continue
				}
				seen++
				if l.GetValue() != "GET /v1/things/{id}" {
					t.Errorf("%s route label %q, want the matched pattern", mf.GetName(), l.GetValue())
				}
			}
		}
	}
	if seen == 0 {
		t.Fatal("no route label recorded")
	}
}
