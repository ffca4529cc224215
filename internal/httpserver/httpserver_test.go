package httpserver

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/problem"
)

func TestRunServesMetricsAndDrainsOnShutdown(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /slow", func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
		WriteJSON(w, 200, map[string]string{"ok": "yes"})
	})
	mux.HandleFunc("GET /hello/{name}", func(w http.ResponseWriter, r *http.Request) {
		WriteJSON(w, 200, r.PathValue("name"))
	})
	s, err := Listen("127.0.0.1:0", mux, slog.New(slog.DiscardHandler), NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	runErr := make(chan error, 1)
	go func() { runErr <- s.Run(ctx) }()

	resp, err := http.Get(s.URL() + "/hello/x1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = http.Get(s.URL() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `http_requests_total{code="200",method="GET",route="GET /hello/{name}"} 1`) {
		t.Fatalf("metrics lack the request counter labelled by route:\n%s", body)
	}

	slow := make(chan string, 1)
	go func() {
		resp, err := http.Get(s.URL() + "/slow")
		if err != nil {
			slow <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		slow <- string(b)
	}()
	<-entered
	cancel() // shutdown begins while /slow is in flight
	close(release)
	if got := <-slow; !strings.Contains(got, `"ok":"yes"`) {
		t.Fatalf("in-flight request got %q, want its full response", got)
	}
	if err := <-runErr; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func TestReadJSONErrors(t *testing.T) {
	type body struct {
		NID int `json:"NID"`
	}
	tests := []struct {
		name, in, want string
		limit          int64
	}{
		{name: "type", in: `{"NID":"x"}`, want: "field NID"},
		{name: "syntax", in: `{"NID":`, want: "truncated"},
		{name: "empty", in: ``, want: "empty"},
		{name: "trailing", in: `{"NID":1} {}`, want: "after the JSON value"},
		{name: "too large", in: `{"NID":1111111}`, limit: 5, want: "over 5 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := http.NewRequest("POST", "/", strings.NewReader(tt.in))
			var v body
			err := ReadJSON(nil, r, tt.limit, &v)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			}
			if tt.name == "too large" && problem.Status(err) != 413 {
				t.Fatalf("status = %d, want 413", problem.Status(err))
			}
		})
	}
}

func BenchmarkInstrumentedRequest(b *testing.B) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /hmi/v1/heartbeat", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) })
	reg := NewRegistry()
	h := instrument(mux, slog.New(slog.DiscardHandler), newMetrics(reg))
	req, _ := http.NewRequest("POST", "/hmi/v1/heartbeat", nil)
	w := &nullWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(w, req)
	}
}

type nullWriter struct{ h http.Header }

func (w *nullWriter) Header() http.Header         { return w.h }
func (w *nullWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *nullWriter) WriteHeader(int)             {}

// TestURLReachesAnUnspecifiedBind: a server bound to every address is
// reached through loopback, the way peers on the same host call it.
func TestURLReachesAnUnspecifiedBind(t *testing.T) {
	for _, tc := range []struct{ listen, prefix string }{
		{listen: ":0", prefix: "http://127.0.0.1:"},
		{listen: "0.0.0.0:0", prefix: "http://127.0.0.1:"},
		{listen: "127.0.0.1:0", prefix: "http://127.0.0.1:"},
	} {
		s, err := Listen(tc.listen, http.NotFoundHandler(), slog.New(slog.DiscardHandler), NewRegistry())
		if err != nil {
			t.Fatal(err)
		}
		if got := s.URL(); !strings.HasPrefix(got, tc.prefix) || strings.HasSuffix(got, ":0") {
			t.Errorf("Listen(%q).URL() = %q, want %s<port>", tc.listen, got, tc.prefix)
		}
		s.Close()
	}
}

// TestMetricsRoute: /metrics answers GET and HEAD, refuses other methods
// with problem+json, and every other path reaches the daemon's handler.
func TestMetricsRoute(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	s := Serve(nil, h, slog.New(slog.DiscardHandler), NewRegistry())
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/metrics", 200}, {"HEAD", "/metrics", 200}, {"POST", "/metrics", 405},
		{"GET", "/metrics/x", 418}, {"GET", "/hmi/v1/params", 418},
	} {
		rec := httptest.NewRecorder()
		s.srv.Handler.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
		if rec.Code != tc.status {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, rec.Code, tc.status)
		}
		if tc.status == 405 && rec.Header().Get("Content-Type") != problem.ContentType {
			t.Errorf("%s %s: Content-Type %q, want problem+json", tc.method, tc.path, rec.Header().Get("Content-Type"))
		}
	}
}
