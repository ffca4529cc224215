package orchestrator

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestClientUserAgent: the typed client names itself "hms" unless told
// otherwise (it sent Go's default before it was built by
// httpclient.NewDaemon as the other daemons' clients are), and accepts a
// base URL with or without its /v2.
func TestClientUserAgent(t *testing.T) {
	for _, tc := range []struct{ base, ua, want string }{
		{"", "", "hms"},
		{"/v2/", "hms-cli/1.0", "hms-cli/1.0"},
	} {
		var got, path string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got, path = r.UserAgent(), r.URL.Path
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode([]Template{})
		}))
		if _, err := NewClient(srv.URL+tc.base, srv.Client(), tc.ua).Templates(t.Context()); err != nil {
			t.Fatal(err)
		}
		srv.Close()
		if got != tc.want || path != "/v2/sessiontemplates" {
			t.Errorf("base %q, agent %q: sent User-Agent %q to %s, want %q to /v2/sessiontemplates", tc.base, tc.ua, got, path, tc.want)
		}
	}
}
