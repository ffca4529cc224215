package discovery

import (
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/auth/authtest"
	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/ipxe/lease"
)

// putDiscovery sends PUT /v1/discovery naming mac at ip with token to h.
func putDiscovery(h http.Handler, token, mac, ip string) *httptest.ResponseRecorder {
	body := `{"addresses":[{"macAddress":"` + strings.ReplaceAll(mac, ":", "") +
		`","IPAddresses":[{"addressType":"IPv4","address":"` + ip + `"}]}]}`
	req := httptest.NewRequest("PUT", "/v1/discovery", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// guardedAPI is the API of d behind the JWT guard of a test issuer.
func guardedAPI(t *testing.T, d *Daemon) (http.Handler, *authtest.Issuer) {
	t.Helper()
	is := authtest.New(t)
	h, err := is.Config().Wrap(NewAPI(d.svc, d.store, nil, testToken).Handler(), AuthTable(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return h, is
}

// checkPlace checks that PUT /v1/discovery of mac at ip with token answers
// want (a problem+json saying detail, unless 200) and that svc acted on
// one event if it is 200, on none otherwise.
func checkPlace(t *testing.T, h http.Handler, svc *Service, token, mac, ip string, want int, detail string) {
	t.Helper()
	checkPlaced(t, h, svc, token, mac, ip, want, detail, map[bool]float64{true: 1}[want == 200])
}

// checkPlaced is checkPlace expecting n MACs placed (none for a repeat of
// a registration done: 200 all the same, with no body, as a success).
func checkPlaced(t *testing.T, h http.Handler, svc *Service, token, mac, ip string, want int, detail string, n float64) {
	t.Helper()
	placed := func() float64 { return commitsActedOn(svc) }
	before := placed()
	w := putDiscovery(h, token, mac, ip)
	if w.Code != want || !strings.Contains(w.Body.String(), detail) {
		t.Fatalf("PUT /v1/discovery: %d %s; want %d saying %q", w.Code, w.Body, want, detail)
	}
	if got := placed() - before; got != n {
		t.Errorf("placed %v MACs, want %v", got, n)
	}
	if want == 200 && w.Body.Len() != 0 {
		t.Errorf("body %q, want none (as a success)", w.Body)
	}
	if want != 200 && w.Header().Get("Content-Type") != "application/problem+json" {
		t.Errorf("Content-Type %q, want application/problem+json", w.Header().Get("Content-Type"))
	}
}

// commitsActedOn is how many commit events svc has acted on, whatever it did.
func commitsActedOn(svc *Service) (n float64) {
	for _, action := range []string{"queued", "coalesced", "netboot", "ignored"} {
		n += testutil.ToFloat64(svc.m.leases.WithLabelValues(string(lease.Commit), action))
	}
	return n
}

// TestNodeTokenPlacesOwnBMC: a node token (on the node's kernel command
// line, readable by any local user) places its own BMC only at the address
// reds has for it or at the address of its lease; any other address is
// 403 problem+json and nothing is queued (review-4: the pipeline logged in
// there with the BMC's password and re-pointed HSM at it).
func TestNodeTokenPlacesOwnBMC(t *testing.T) {
	_, d := startDaemon(t, false)
	h, is := guardedAPI(t, d)
	const (
		registered = "a4:bf:01:39:00:02"
		moved      = "a4:bf:01:39:00:04" // registered, then leased another address
	)
	for _, e := range []Endpoint{
		{Xname: "x3000c0s2b0", Kind: KindRiver, MAC: registered, IP: "10.254.2.2", State: StateRegistered, Password: "pw2"},
		{Xname: "x3000c0s4b0", Kind: KindRiver, MAC: moved, IP: "10.254.2.4", State: StateRegistered, Password: "pw4"},
	} {
		if err := d.store.Put(t.Context(), e); err != nil {
			t.Fatal(err)
		}
	}
	d.svc.noteLease(lease.Event{Kind: lease.Commit, MACAddress: moved, IPAddress: "10.254.2.5"})
	for _, tt := range []struct {
		name, node, mac, ip string
		want                int
		detail              string
	}{
		{name: "registered, attacker's address", node: "x3000c0s2b0n0", mac: registered, ip: "192.0.2.66", want: 403,
			detail: "only at the address reds has for it (10.254.2.2) or at that of its DHCP lease, not at 192.0.2.66"},
		{name: "registered, its address", node: "x3000c0s2b0n0", mac: registered, ip: "10.254.2.2", want: 200},
		{name: "moved, its lease's address", node: "x3000c0s4b0n0", mac: moved, ip: "10.254.2.5", want: 200},
		{name: "moved, attacker's address", node: "x3000c0s4b0n0", mac: moved, ip: "10.254.2.66", want: 403,
			detail: "not at 10.254.2.66"},
		{name: "another node's BMC", node: "x3000c0s4b0n0", mac: registered, ip: "10.254.2.2", want: 403,
			detail: "own BMC x3000c0s4b0 only"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			checkPlace(t, h, d.svc, is.Token(tt.node, auth.Node), tt.mac, tt.ip, tt.want, tt.detail)
		})
	}
}

// TestClaimedAddressGetsNoPassword: end to end, a registered BMC's MAC
// named at another address (here a TLS server on 127.0.0.99 recording
// Basic auth) does not have reds send the BMC's password there nor
// re-point HSM: a node token is refused (403), and an admin's PUT, which
// the API lets through, is refused by the pipeline (defence in depth),
// leaving the endpoint registered where it was.
func TestClaimedAddressGetsNoPassword(t *testing.T) {
	mac0 := redfishsim.MAC("x3000c0s1b0", "bmc:eth0")
	_, swAddr := simSwitch(t, mac0)
	s := newSuite(t, riverLayout(swAddr, false, 1), []string{"x3000c0s1b0"})
	s.startService(NewSNMPWalker(SNMPConfig{Timeout: 2 * time.Second, Retries: 1}), Config{RetryMin: time.Hour, Switch: SwitchConfig{Community: "public"}})
	s.lease(mac0, s.bmcIP(0))
	if o := s.next(); o.err != nil || o.xname != "x3000c0s1b0" {
		t.Fatalf("outcome %+v", o)
	}
	want, err := s.store.Get(t.Context(), "x3000c0s1b0")
	if err != nil || want.Password == "" {
		t.Fatal(want, err)
	}
	var mu sync.Mutex
	var got []string
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.99", strconv.Itoa(s.port)))
	if err != nil {
		t.Fatal(err)
	}
	evil := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pw, ok := r.BasicAuth(); ok {
			mu.Lock()
			got = append(got, r.Method+" "+r.URL.Path+" "+pw)
			mu.Unlock()
		}
		_, _ = w.Write([]byte(`{}`))
	}))
	evil.Listener.Close()
	evil.Listener = ln
	evil.StartTLS()
	defer evil.Close()

	is := authtest.New(t)
	h, err := is.Config().Wrap(NewAPI(s.svc, s.store, nil, testToken).Handler(), AuthTable(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if w := putDiscovery(h, is.Token("x3000c0s1b0n0", auth.Node), mac0, "127.0.0.99"); w.Code != 403 {
		t.Errorf("node token: %d %s, want 403", w.Code, w.Body)
	}
	if w := putDiscovery(h, is.Token("ada", auth.Admin), mac0, "127.0.0.99"); w.Code != 200 {
		t.Fatalf("admin token: %d %s, want 200", w.Code, w.Body)
	}
	if o := s.next(); o.err == nil || reasonOf(o.err) != ReasonBMC {
		t.Errorf("outcome of the admin's claimed address %+v, want a %s error", o, ReasonBMC)
	}
	mu.Lock()
	seen := slices.Clone(got)
	mu.Unlock()
	if len(seen) > 0 {
		t.Errorf("127.0.0.99 received %q", seen)
	}
	if ep, err := s.hsm.RedfishEndpoint(t.Context(), "x3000c0s1b0"); err != nil || ep.IPAddress != s.bmcIP(0) {
		t.Errorf("HSM's RedfishEndpoint %+v, %v; want it at %s", ep, err, s.bmcIP(0))
	}
	if e, err := s.store.Get(t.Context(), "x3000c0s1b0"); err != nil || e.IP != want.IP || e.State != StateRegistered || e.Password != want.Password {
		t.Errorf("stored endpoint %s %s %v, want it registered at %s as before", e.IP, e.State, err, want.IP)
	}
}

// TestLeaseVouchesForClaim: a DHCP server's lease at the address a caller
// of PUT /v1/discovery named lifts the claim, whichever came first; a
// lease at another address takes the job over.
func TestLeaseVouchesForClaim(t *testing.T) {
	for _, tt := range []struct {
		name        string
		first, then func(*Service, lease.Event)
		thenIP      string
		want        bool
	}{
		{name: "claim then lease", first: (*Service).claim, then: (*Service).place, thenIP: "10.254.0.10", want: false},
		{name: "lease then claim", first: (*Service).place, then: (*Service).claim, thenIP: "10.254.0.10", want: false},
		{name: "claims only", first: (*Service).claim, then: (*Service).claim, thenIP: "10.254.0.10", want: true},
		{name: "claim then lease elsewhere", first: (*Service).claim, then: (*Service).place, thenIP: "10.254.0.11", want: false},
		{name: "lease then claim elsewhere", first: (*Service).place, then: (*Service).claim, thenIP: "10.254.0.11", want: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := New(Config{}) // not Run: nothing takes the queue
			const mac = "02:00:00:00:aa:01"
			tt.first(s, lease.Event{Kind: lease.Commit, MACAddress: mac, IPAddress: "10.254.0.10"})
			tt.then(s, lease.Event{Kind: lease.Commit, MACAddress: mac, IPAddress: tt.thenIP})
			s.mu.Lock()
			j := s.jobs[mac]
			s.mu.Unlock()
			if j.ip != tt.thenIP || j.claimed != tt.want {
				t.Errorf("job at %s claimed %v, want at %s claimed %v", j.ip, j.claimed, tt.thenIP, tt.want)
			}
		})
	}
}
