package discovery

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hmsuite/hms/ipxe/lease"
)

// TestCredentialsTokenLimits: the discovery token obtains credentials only
// for a MAC holding a lease reds saw (not one PUT /v1/discovery named) and
// not registered; otherwise 403 problem+json saying why, and nothing is
// stored.
func TestCredentialsTokenLimits(t *testing.T) {
	_, d := startDaemon(t, false)
	h := NewAPI(d.svc, d.store, nil, testToken).Handler()
	ctx := t.Context()
	const (
		leased     = "a4:bf:01:38:00:01"
		registered = "a4:bf:01:38:00:02"
		expired    = "a4:bf:01:38:00:03"
		named      = "a4:bf:01:38:00:04" // by PUT /v1/discovery only
		never      = "a4:bf:01:38:00:05"
		known      = "a4:bf:01:38:00:06" // HSM's: a known MAC's lease
	)
	for i, mac := range []string{leased, registered, expired, known} {
		d.svc.Notice(lease.Event{Kind: lease.Commit, MACAddress: mac, IPAddress: "10.254.1." + string(rune('1'+i)), Known: mac == known})
	}
	d.svc.Notice(lease.Event{Kind: lease.Expire, MACAddress: expired, IPAddress: "10.254.1.3"})
	if err := d.store.Put(ctx, Endpoint{Xname: "x3000c0s1b0", Kind: KindRiver, MAC: registered, State: StateRegistered}); err != nil {
		t.Fatal(err)
	}
	do := func(method, path, mac string) *httptest.ResponseRecorder {
		body := `{"addresses":[{"macAddress":"` + strings.ReplaceAll(mac, ":", "") + `","IPAddresses":[{"addressType":"IPv4","address":"10.254.1.9"}]}]}`
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testToken)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	if w := do("PUT", "/v1/discovery", named); w.Code != 200 {
		t.Fatalf("PUT /v1/discovery: %d %s", w.Code, w.Body)
	}
	for _, tt := range []struct {
		name, mac string
		want      int
		detail    string
	}{
		{name: "leased, not registered", mac: leased, want: 200},
		{name: "registered", mac: registered, want: 403, detail: "x3000c0s1b0, registered already"},
		{name: "lease expired", mac: expired, want: 403, detail: "holding a DHCP lease"},
		{name: "named by PUT /v1/discovery only", mac: named, want: 403, detail: "holding a DHCP lease"},
		{name: "never leased", mac: never, want: 403, detail: "holding a DHCP lease"},
		{name: "known to HSM", mac: known, want: 403, detail: "holding a DHCP lease"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := do("POST", "/v1/credentials", tt.mac)
			if w.Code != tt.want || !strings.Contains(w.Body.String(), tt.detail) {
				t.Fatalf("POST /v1/credentials: %d %s; want %d saying %q", w.Code, w.Body, tt.want, tt.detail)
			}
			pw, err := d.store.NodeCreds(ctx, tt.mac)
			if err != nil || (pw != "") != (tt.want == 200) {
				t.Errorf("stored password %q, %v", pw, err)
			}
			if tt.want != 200 && w.Header().Get("Content-Type") != "application/problem+json" {
				t.Errorf("Content-Type %q, want application/problem+json", w.Header().Get("Content-Type"))
			}
		})
	}
}
