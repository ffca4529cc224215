package layout

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/auth/authtest"
)

// TestAuthTable: the auth table names every route sls serves, and nothing
// else.
func TestAuthTable(t *testing.T) {
	s := openTestStore(t, filepath.Join(t.TempDir(), "sls.db"), testNow)
	authtest.CheckTable(t, AuthTable(), NewAPI(s, nil, prometheus.NewRegistry()).Handler().Patterns())
}

// TestDaemonEnforcesAuth: with a key source configured, sls refuses
// callers without a token or the role, stores nothing for them, and leaves
// health open, on its own paths and the gateway's.
func TestDaemonEnforcesAuth(t *testing.T) {
	is := authtest.New(t)
	d, err := StartDaemon(t.Context(), DaemonConfig{Listen: "127.0.0.1:0", DB: filepath.Join(t.TempDir(), "sls.db"), Auth: is.Config()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	hw := `{"Parent":"x3000","Xname":"x3000c0s1b0","Class":"River"}`
	viewer, operator := is.Token("ann", auth.Viewer), is.Token("olaf", auth.Operator)
	steps := []struct {
		method, path, body, token string
		want                      int
	}{
		{method: "GET", path: "/v1/liveness", want: 204},
		{method: "GET", path: "/v1/hardware", want: 401},
		{method: "POST", path: "/v1/hardware", body: hw, token: viewer, want: 403},
		{method: "POST", path: "/apis/sls/v1/hardware", body: hw, token: viewer, want: 403},
		{method: "POST", path: "/v1/hardware", body: hw, token: "not-a-jwt", want: 401},
		{method: "GET", path: "/v1/hardware/x3000c0s1b0", token: viewer, want: 404},
		{method: "POST", path: "/v1/hardware", body: hw, token: operator, want: 201},
		{method: "GET", path: "/apis/sls/v1/hardware/x3000c0s1b0", token: viewer, want: 200},
		{method: "GET", path: "/v1/dumpstate", token: operator, want: 403},
	}
	for _, s := range steps {
		req, _ := http.NewRequestWithContext(t.Context(), s.method, d.URL()+s.path, strings.NewReader(s.body))
		if s.token != "" {
			req.Header.Set("Authorization", "Bearer "+s.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != s.want {
			t.Errorf("%s %s (token %.10s): %d, want %d", s.method, s.path, s.token, resp.StatusCode, s.want)
		}
	}
}
