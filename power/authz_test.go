package power

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/auth/authtest"
	"github.com/hmsuite/hms/internal/httpserver"
)

// TestAuthTable: the table names every route pcs serves, and nothing else;
// a viewer reads power status but powers nothing.
func TestAuthTable(t *testing.T) {
	e := newEnv(t, 1, nil)
	h := NewAPI(e.daemon.Service(), nil).Handler()
	authtest.CheckTable(t, AuthTable(), h.(*httpserver.Mux).Patterns())
	is := authtest.New(t)
	guarded, err := is.Config().Wrap(h, AuthTable(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	viewer := is.Token("vera", auth.Viewer)
	on := `{"operation":"on","location":[{"xname":"` + e.node(0) + `"}]}`
	for _, s := range []struct {
		method, path, body, token string
		want                      int
	}{
		{method: "GET", path: "/v1/power-status", want: 401},
		{method: "POST", path: "/v1/transitions", body: on, token: viewer, want: 403},
		{method: "POST", path: "/capmc/v1/xname_on", body: `{"xnames":["` + e.node(0) + `"]}`, token: viewer, want: 403},
		{method: "GET", path: "/v1/power-status", token: viewer, want: 200},
		{method: "GET", path: "/v1/transitions", token: viewer, want: 200},
	} {
		req := httptest.NewRequest(s.method, s.path, strings.NewReader(s.body))
		if s.token != "" {
			req.Header.Set("Authorization", "Bearer "+s.token)
		}
		w := httptest.NewRecorder()
		guarded.ServeHTTP(w, req)
		if w.Code != s.want {
			t.Errorf("%s %s: %d, want %d", s.method, s.path, w.Code, s.want)
		}
	}
	if code, body := e.call("GET", "/v1/transitions", nil); code != http.StatusOK || strings.Contains(string(body), `"operation":"on"`) {
		t.Errorf("transitions after refusals: %d %s, want none", code, body)
	}
}
