package discovery

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/auth"
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
		d.svc.Notice(t.Context(), lease.Event{Kind: lease.Commit, MACAddress: mac, IPAddress: "10.254.1." + string(rune('1'+i)), Known: mac == known})
	}
	d.svc.Notice(t.Context(), lease.Event{Kind: lease.Expire, MACAddress: expired, IPAddress: "10.254.1.3"})
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
	// As an admin's PUT /v1/discovery does (the token's is refused: no lease).
	d.svc.place(lease.Event{Kind: lease.Commit, MACAddress: named, IPAddress: "10.254.1.9"})
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
			nc, err := d.store.NodeCreds(ctx, tt.mac)
			if pw := nc.Password; err != nil || (pw != "") != (tt.want == 200) {
				t.Errorf("stored password %q, %v", pw, err)
			}
			if tt.want != 200 && w.Header().Get("Content-Type") != "application/problem+json" {
				t.Errorf("Content-Type %q, want application/problem+json", w.Header().Get("Content-Type"))
			}
		})
	}
}

// TestDiscoveryTokenLimits: with the discovery token, PUT /v1/discovery
// places only a MAC holding a lease reds saw, not registered, at the
// address of that lease; otherwise 403 problem+json and nothing placed (a
// registered BMC's MAC named with another address would have the pipeline
// log in there with its credentials). A registered BMC's MAC at the
// address it is registered at is the image repeating a registration done:
// 200, as a success, and nothing placed. An admin's token places any.
func TestDiscoveryTokenLimits(t *testing.T) {
	_, d := startDaemon(t, false)
	h, is := guardedAPI(t, d)
	const (
		leased     = "a4:bf:01:39:00:01"
		registered = "a4:bf:01:39:00:02"
		never      = "a4:bf:01:39:00:03"
		unleased   = "a4:bf:01:39:00:04" // registered, its lease ended since
	)
	d.svc.Notice(t.Context(), lease.Event{Kind: lease.Commit, MACAddress: registered, IPAddress: "10.254.2.2"})
	if err := d.store.Put(t.Context(), Endpoint{Xname: "x3000c0s2b0", Kind: KindRiver, MAC: registered, IP: "10.254.2.2",
		State: StateRegistered}); err != nil {
		t.Fatal(err)
	}
	if err := d.store.Put(t.Context(), Endpoint{Xname: "x3000c0s4b0", Kind: KindRiver, MAC: unleased, IP: "10.254.2.4",
		State: StateMissing}); err != nil {
		t.Fatal(err)
	}
	d.svc.noteLease(lease.Event{Kind: lease.Commit, MACAddress: leased, IPAddress: "10.254.2.1"})
	admin := is.Token("ada", auth.Admin)
	for _, tt := range []struct {
		name, token, mac, ip string
		want                 int
		detail               string
		noop                 bool // 200 with nothing placed
	}{
		{name: "registered, attacker's address", token: testToken, mac: registered, ip: "192.0.2.66", want: 403,
			detail: "x3000c0s2b0, registered already"},
		// The image repeating a registration done: a success, nothing placed.
		{name: "registered, its address", token: testToken, mac: registered, ip: "10.254.2.2", want: 200, noop: true},
		{name: "registered, lease ended, its address", token: testToken, mac: unleased, ip: "10.254.2.4", want: 200, noop: true},
		{name: "registered, lease ended, another address", token: testToken, mac: unleased, ip: "10.254.2.5", want: 403,
			detail: "holding a DHCP lease"},
		{name: "never leased", token: testToken, mac: never, ip: "10.254.2.3", want: 403, detail: "holding a DHCP lease"},
		{name: "leased, another address", token: testToken, mac: leased, ip: "10.254.2.9", want: 403,
			detail: "holds 10.254.2.1, not 10.254.2.9"},
		{name: "leased, its address", token: testToken, mac: leased, ip: "10.254.2.1", want: 200},
		{name: "admin, no lease", token: admin, mac: never, ip: "10.254.2.3", want: 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			checkPlaced(t, h, d.svc, tt.token, tt.mac, tt.ip, tt.want, tt.detail, map[bool]float64{true: 1}[tt.want == 200 && !tt.noop])
		})
	}
}
