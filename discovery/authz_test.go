package discovery

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/auth/authtest"
	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/ipxe/lease"
)

// TestAuthTable: the table names every route reds serves, and nothing
// else; a viewer reads the endpoints, an anonymous caller does not; the
// discovery image's routes keep their own token check (a leased MAC not
// registered yet only), and take an admin's token, or a node token for
// the MACs of its own BMC only.
func TestAuthTable(t *testing.T) {
	_, d := startDaemon(t, false)
	is := authtest.New(t)
	h := NewAPI(d.svc, d.store, nil, "secret").Handler()
	if err := d.store.Put(t.Context(), Endpoint{Xname: "x3000c0s1b0", Kind: "NodeBMC", MAC: "a4:bf:01:38:ee:5d", State: "registered"}); err != nil {
		t.Fatal(err)
	}
	body := func(mac string) string {
		return `{"addresses":[{"macAddress":"` + mac + `","IPAddresses":[{"addressType":"IPv4","address":"10.254.1.7"}]}]}`
	}
	own, other, leased := body("a4bf0138ee5d"), body("a4bf0138ee5e"), body("a4bf0138ee5f")
	d.svc.noteLease(lease.Event{Kind: lease.Commit, MACAddress: "a4:bf:01:38:ee:5d", IPAddress: "10.254.1.7"})
	d.svc.noteLease(lease.Event{Kind: lease.Commit, MACAddress: "a4:bf:01:38:ee:5f", IPAddress: "10.254.1.8"})
	node, neighbour := is.Token("x3000c0s1b0n0", auth.Node), is.Token("x3000c0s2b0n0", auth.Node)
	authtest.CheckTable(t, AuthTable(), h.(*httpserver.Mux).Patterns())
	guarded, err := is.Config().Wrap(h, AuthTable(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		method, path, token, body string
		want                      int
	}{
		{method: "GET", path: "/v1/endpoints", want: 401},
		{method: "GET", path: "/v1/endpoints", token: is.Token("vera", auth.Viewer), want: 200},
		{method: "POST", path: "/v1/credentials", body: own, want: 401},
		{method: "POST", path: "/v1/credentials", token: is.Token("vera", auth.Viewer), body: own, want: 401},
		{method: "POST", path: "/v1/credentials", token: "secret", body: leased, want: 200},
		{method: "POST", path: "/v1/credentials", token: "secret", body: own, want: 403},   // registered
		{method: "POST", path: "/v1/credentials", token: "secret", body: other, want: 403}, // no lease
		{method: "POST", path: "/v1/credentials", token: is.Token("ada", auth.Admin), body: other, want: 200},
		{method: "POST", path: "/v1/credentials", token: node, body: own, want: 200},
		{method: "PUT", path: "/v1/discovery", token: node, body: own, want: 200},
		{method: "POST", path: "/v1/credentials", token: neighbour, body: own, want: 403},
		{method: "POST", path: "/v1/credentials", token: node, body: other, want: 403},
		{method: "PUT", path: "/v1/discovery", token: neighbour, body: own, want: 403},
		{method: "GET", path: "/v1/liveness", want: 204},
	} {
		req := httptest.NewRequest(s.method, s.path, strings.NewReader(s.body))
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
