package ipxe

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/auth/authtest"
	"github.com/hmsuite/hms/internal/httpserver"
)

// TestAuthTable: the table names every route bss serves, and nothing else.
func TestAuthTable(t *testing.T) {
	h := newHarness(t)
	authtest.CheckTable(t, AuthTable(), NewAPI(h.svc, nil, nil, Version).Handler().(*httpserver.Mux).Patterns())
}

// TestNodeTokenBootsItselfOnly: a node token gets its own boot script and
// cloud-init (from its own address), not another node's.
func TestNodeTokenBootsItselfOnly(t *testing.T) {
	is := authtest.New(t)
	h := newHarness(t)
	h.nodes(node("x3000c0s1b0n0", "Compute", "", 1, []string{"a4:bf:01:00:00:01"}, "127.0.0.1"),
		node("x3000c0s2b0n0", "Compute", "", 2, []string{"a4:bf:01:00:00:02"}, "10.1.1.2"))
	guarded, err := is.Config().Wrap(NewAPI(h.svc, nil, nil, Version).Handler(), authTable(h.svc.callerXname), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(guarded)
	t.Cleanup(srv.Close)
	self, other := is.Token("x3000c0s1b0n0", auth.Node), is.Token("x3000c0s2b0n0", auth.Node)
	steps := []struct {
		path, token string
		want        int
	}{
		{path: "/boot/v1/bootscript?name=x3000c0s1b0n0", want: 401},
		{path: "/boot/v1/bootscript?name=x3000c0s2b0n0", token: self, want: 403},
		{path: "/boot/v1/bootscript?mac=a4:bf:01:00:00:01", token: self, want: 403},
		// name= its own, mac=/nid= another's: the lookup falls through to
		// them when no entry has its name (found by review).
		{path: "/boot/v1/bootscript?name=x3000c0s1b0n0&mac=a4:bf:01:00:00:02", token: self, want: 403},
		{path: "/boot/v1/bootscript?name=x3000c0s1b0n0&nid=2", token: self, want: 403},
		{path: "/boot/v1/nosuchroute", token: self, want: 403},
		{path: "/boot/v1/bootparameters", token: self, want: 403},
		{path: "/user-data", token: other, want: 403},
		{path: "/boot/v1/dumpstate", token: is.Token("vera", auth.Viewer), want: 403},
		{path: "/user-data", token: self, want: 200},
		{path: "/meta-data", token: self, want: 200},
		{path: "/boot/v1/service/status", want: 200},
	}
	for _, s := range steps {
		req, _ := http.NewRequestWithContext(t.Context(), "GET", srv.URL+s.path, nil)
		if s.token != "" {
			req.Header.Set("Authorization", "Bearer "+s.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != s.want {
			t.Errorf("GET %s: %d, want %d", s.path, resp.StatusCode, s.want)
		}
	}
}
