package discovery

import (
	"net/http/httptest"
	"testing"

	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/auth/authtest"
	"github.com/hmsuite/hms/internal/httpserver"
)

// TestAuthTable: the table names every route reds serves, and nothing
// else; a viewer reads the endpoints, an anonymous caller does not, and
// the discovery image's routes keep their own token check.
func TestAuthTable(t *testing.T) {
	_, d := startDaemon(t, false)
	h := NewAPI(d.svc, d.store, nil, "secret").Handler()
	authtest.CheckTable(t, AuthTable(), h.(*httpserver.Mux).Patterns())
	is := authtest.New(t)
	guarded, err := is.Config().Wrap(h, AuthTable(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		method, path, token string
		want                int
	}{
		{method: "GET", path: "/v1/endpoints", want: 401},
		{method: "GET", path: "/v1/endpoints", token: is.Token("vera", auth.Viewer), want: 200},
		{method: "POST", path: "/v1/credentials", token: is.Token("vera", auth.Admin), want: 401},
		{method: "GET", path: "/v1/liveness", want: 204},
	} {
		req := httptest.NewRequest(s.method, s.path, nil)
		if s.token != "" {
			req.Header.Set("Authorization", "Bearer "+s.token)
		}
		w := httptest.NewRecorder()
		guarded.ServeHTTP(w, req)
		if w.Code != s.want {
			t.Errorf("%s %s: %d %s, want %d", s.method, s.path, w.Code, w.Body, s.want)
		}
	}
}
