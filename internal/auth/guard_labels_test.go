package auth

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
)

// TestGuardRouteLabels: the server's request metrics label a guarded
// request by the daemon's pattern, as without the guard, whether it is
// passed on (with the caller in a copy of the request) or refused; a path
// neither the table nor the daemon knows is "unmatched", never the guard's
// catch-all "/".
func TestGuardRouteLabels(t *testing.T) {
	is := newTestIssuer(t)
	daemon := httpserver.NewMux(problem.Style{})
	for _, p := range []string{"GET /v1/health", "GET /v1/things", "GET /v1/secret"} {
		daemon.HandleFunc(p, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	}
	g := newGuard(is.verifier(is.config()), false, testTable(), daemon, nil, nil)
	reg := httpserver.NewRegistry()
	srv, err := httpserver.Listen("127.0.0.1:0", g, slog.New(slog.DiscardHandler), reg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	admin := is.sign("ec", claims{"sub": "a", "roles": []string{"admin"}})
	viewer := is.sign("ec", claims{"sub": "v", "roles": []string{"viewer"}})
	get := func(path, tok string, want int) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL()+path, nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
	get("/v1/health", "", 204)      // open: passed as it is
	get("/v1/things", viewer, 204)  // checked: passed in a copy
	get("/v1/things", "", 401)      // refused
	get("/v1/secret", admin, 204)   // not in the table, served
	get("/v1/secret", viewer, 403)  // not in the table, refused
	get("/v1/nowhere", viewer, 403) // in neither, refused
	get("/v1/nowhere", admin, 404)  // in neither, passed

	resp, err := http.Get(srv.URL() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`code="204",method="GET",route="GET /v1/health"} 1`,
		`code="204",method="GET",route="GET /v1/things"} 1`,
		`code="401",method="GET",route="GET /v1/things"} 1`,
		`code="204",method="GET",route="GET /v1/secret"} 1`,
		`code="403",method="GET",route="GET /v1/secret"} 1`,
		`code="403",method="GET",route="unmatched"} 1`,
		`code="404",method="GET",route="unmatched"} 1`,
	} {
		if !strings.Contains(string(body), "http_requests_total{"+want) {
			t.Errorf("metrics lack http_requests_total{%s", want)
		}
	}
	if strings.Contains(string(body), `route="/"`) {
		t.Errorf("a request is labelled with the guard's catch-all:\n%s", body)
	}
}
