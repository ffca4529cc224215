package auth

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// fakeServer is the daemon's server as Configure sees it.
type fakeServer struct {
	metrics http.Handler
	tls     *tls.Config
}

func (s *fakeServer) WrapMetrics(wrap func(http.Handler) http.Handler) { s.metrics = wrap(s.metrics) }
func (s *fakeServer) UseTLS(c *tls.Config)                             { s.tls = c }

// TestDaemonOneVerifier: with -metrics-auth the guard of /metrics is the
// daemon's own verifier (the JWKS is fetched once for both) and counts its
// decisions with the routes'.
func TestDaemonOneVerifier(t *testing.T) {
	is := newTestIssuer(t)
	cfg := is.config()
	cfg.MetricsAuth = true
	reg := prometheus.NewRegistry()
	d, err := cfg.NewDaemon(testTable(), nil, reg)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	routes := d.Wrap(rec)
	srv := &fakeServer{metrics: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })}
	d.Configure(srv)
	if srv.tls != nil {
		t.Errorf("TLS on without a certificate")
	}
	now := time.Now()
	tok := is.sign("ed", claims{"roles": []string{"viewer"}, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()})
	for _, tt := range []struct {
		h     http.Handler
		path  string
		token string
		want  int
	}{
		{h: routes, path: "/v1/things", token: tok, want: http.StatusNoContent},
		{h: srv.metrics, path: "/metrics", token: tok, want: http.StatusOK},
		{h: srv.metrics, path: "/metrics", want: http.StatusUnauthorized},
	} {
		req := httptest.NewRequest(http.MethodGet, tt.path, nil)
		if tt.token != "" {
			req.Header.Set("Authorization", "Bearer "+tt.token)
		}
		w := httptest.NewRecorder()
		tt.h.ServeHTTP(w, req)
		if w.Code != tt.want {
			t.Errorf("GET %s: %d, want %d", tt.path, w.Code, tt.want)
		}
	}
	if n := is.fetches.Load(); n != 1 {
		t.Errorf("JWKS fetched %d times, want once for the routes and /metrics", n)
	}
	if n := testutil.ToFloat64(d.decisions.WithLabelValues("allowed", "false")); n != 2 {
		t.Errorf("%v allowed decisions counted, want 2", n)
	}
}
