package inventory

import (
	"crypto/tls"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/redfish"
)

// authRecorder is a "BMC" that records the basic-auth password of every
// request it receives and answers 401, or hands the request on to next.
type authRecorder struct {
	next http.Handler
	mu   sync.Mutex
	seen []string
}

func (a *authRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, pw, ok := r.BasicAuth(); ok {
		a.mu.Lock()
		a.seen = append(a.seen, pw)
		a.mu.Unlock()
	}
	if a.next == nil {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	a.next.ServeHTTP(w, r)
}

func (a *authRecorder) passwords() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.seen...)
}

func (a *authRecorder) count() int { return len(a.passwords()) }

func (a *authRecorder) reset() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seen = nil
}

// TestRFEndpointCredentialsBoundToAddress: stored BMC credentials are bound
// to the endpoint's address. An update that moves the endpoint to another
// FQDN or IPAddress without credentials drops them (the other host never
// sees the password); credentials sent with the move are used; an update
// that keeps the address keeps them; POST over an existing ID changes nothing.
func TestRFEndpointCredentialsBoundToAddress(t *testing.T) {
	const bmcX = "x3000c0s1b0"
	for _, tc := range []struct {
		name     string
		create   func(real string) hsm.RedfishEndpoint
		method   string
		update   func(e *rfEnv, other string) any
		status   int
		wantCred rfCred
		// wantSeen is what the other host sees; "" for nothing.
		wantSeen string
		// walk: the update queues a walk (of the other host) to wait for.
		walk bool
	}{
		{name: "PATCH FQDN", method: "PATCH", status: 200, walk: true,
			create: func(real string) hsm.RedfishEndpoint { return hsm.RedfishEndpoint{FQDN: real} },
			update: func(_ *rfEnv, other string) any {
				return map[string]any{"FQDN": other, "RediscoverOnUpdate": true}
			}},
		{name: "PUT IPAddress", method: "PUT", status: 200, walk: true,
			create: func(real string) hsm.RedfishEndpoint { return hsm.RedfishEndpoint{IPAddress: real} },
			update: func(_ *rfEnv, other string) any {
				return hsm.RedfishEndpoint{IPAddress: other, RediscoverOnUpdate: true}
			}},
		{name: "PATCH FQDN and User", method: "PATCH", status: 200, walk: true, wantCred: rfCred{User: "admin"},
			create: func(real string) hsm.RedfishEndpoint { return hsm.RedfishEndpoint{FQDN: real} },
			update: func(_ *rfEnv, other string) any {
				return map[string]any{"FQDN": other, "User": "admin", "RediscoverOnUpdate": true}
			}},
		{name: "GET-modify-PUT of FQDN", method: "PUT", status: 200, walk: true, wantCred: rfCred{User: "root"},
			create: func(real string) hsm.RedfishEndpoint { return hsm.RedfishEndpoint{FQDN: real} },
			update: func(e *rfEnv, other string) any {
				ep := e.endpoint(bmcX)
				ep.FQDN, ep.RediscoverOnUpdate = other, true
				return ep
			}},
		{name: "PATCH FQDN with new password", method: "PATCH", status: 200, walk: true,
			wantCred: rfCred{User: "root", Password: "other-pass"}, wantSeen: "other-pass",
			create: func(real string) hsm.RedfishEndpoint { return hsm.RedfishEndpoint{FQDN: real} },
			update: func(_ *rfEnv, other string) any {
				return map[string]any{"FQDN": other, "Password": "other-pass", "RediscoverOnUpdate": true}
			}},
		{name: "PATCH same address", method: "PATCH", status: 200,
			wantCred: rfCred{User: "root", Password: rfPassword},
			create:   func(real string) hsm.RedfishEndpoint { return hsm.RedfishEndpoint{FQDN: real} },
			update:   func(_ *rfEnv, _ string) any { return map[string]any{"Name": "renamed"} }},
		{name: "POST over existing ID", method: "POST", status: 409,
			wantCred: rfCred{User: "root", Password: rfPassword},
			create:   func(real string) hsm.RedfishEndpoint { return hsm.RedfishEndpoint{FQDN: real} },
			update: func(_ *rfEnv, other string) any {
				return hsm.RedfishEndpoint{ID: bmcX, FQDN: other, RediscoverOnUpdate: true}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bmc, err := redfishsim.New(redfishsim.Config{Xname: bmcX, Tree: redfishsim.Template(1),
				User: "root", Password: rfPassword})
			if err != nil {
				t.Fatal(err)
			}
			real := httptest.NewServer(bmc.Handler())
			t.Cleanup(real.Close)
			rec := &authRecorder{}
			other := httptest.NewServer(rec)
			t.Cleanup(other.Close)
			e := newRFEnvWith(t, DiscoveryConfig{Workers: 1, PlainHTTP: true}, false)

			ep := tc.create(hostOf(t, real.URL))
			ep.ID, ep.User, ep.Password = bmcX, "root", rfPassword
			e.Must(201, "POST", "/Inventory/RedfishEndpoints", ep)
			path := "/Inventory/RedfishEndpoints"
			if tc.method != "POST" {
				path += "/" + bmcX
			}
			e.Must(tc.status, tc.method, path, tc.update(e, hostOf(t, other.URL)))
			if tc.walk {
				e.waitDiscovered(bmcX)
			}

			row, err := e.store.rfEndpointRow(t.Context(), bmcX)
			if err != nil {
				t.Fatal(err)
			}
			c, err := e.disc.openCred(row)
			if err != nil {
				t.Fatal(err)
			}
			if c != tc.wantCred {
				t.Errorf("stored credentials: user %q, password %q; want user %q, password %q",
					c.User, c.Password, tc.wantCred.User, tc.wantCred.Password)
			}
			for _, pw := range rec.passwords() {
				if pw != tc.wantSeen {
					t.Errorf("the other host received password %q; want %q", pw, tc.wantSeen)
				}
			}
			if tc.wantSeen != "" && rec.count() == 0 {
				t.Errorf("the other host received no credentials; want %q", tc.wantSeen)
			}
		})
	}
}

// hostOf returns the host:port of a test server URL.
func hostOf(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// TestDiscoveryCABundleWithholdsCredentials: with -bmc-ca-bundle, no
// credential leaves HSM for a BMC whose certificate does not verify: an
// impostor at the endpoint's address, a BMC whose certificate changed, or
// another host (even one with a good certificate) a BMC redirects to.
func TestDiscoveryCABundleWithholdsCredentials(t *testing.T) {
	const bmcX = "x3000c0s9b0"
	bmcTLS, err := redfishsim.NewTLSConfig()
	if err != nil {
		t.Fatal(err)
	}
	impostorTLS, err := redfishsim.NewTLSConfig()
	if err != nil {
		t.Fatal(err)
	}
	bmc, err := redfishsim.New(redfishsim.Config{Xname: bmcX, Tree: redfishsim.Template(1), User: "root", Password: rfPassword})
	if err != nil {
		t.Fatal(err)
	}
	// startTLS serves h with certificates from getCert and records what it is sent.
	startTLS := func(t *testing.T, h http.Handler, getCert func() *tls.Certificate) (*httptest.Server, *authRecorder) {
		rec := &authRecorder{next: h}
		ts := httptest.NewUnstartedServer(rec)
		// GetConfigForClient, not GetCertificate: without SNI (an IP address)
		// the server would use Certificates[0], which httptest fills in.
		ts.TLS = &tls.Config{Certificates: []tls.Certificate{*getCert()},
			GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
				return &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"},
					Certificates: []tls.Certificate{*getCert()}}, nil
			}}
		ts.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are expected
		ts.StartTLS()
		t.Cleanup(ts.Close)
		return ts, rec
	}
	good := func() *tls.Certificate { return &bmcTLS.Certificates[0] }
	bad := func() *tls.Certificate { return &impostorTLS.Certificates[0] }

	for _, tc := range []struct {
		name string
		// serve starts the servers and returns the endpoint's address, the
		// recorder that must see no credential after arm is called, and arm.
		serve func(t *testing.T) (addr string, rec *authRecorder, arm func())
		// first is the outcome of a walk before arm; "" for no such walk.
		first, want redfish.Status
	}{
		{name: "impostor certificate", want: redfish.StatusHTTPsGetFailed,
			serve: func(t *testing.T) (string, *authRecorder, func()) {
				ts, rec := startTLS(t, bmc.Handler(), bad)
				return hostOf(t, ts.URL), rec, func() {}
			}},
		{name: "certificate changed", first: redfish.StatusOK, want: redfish.StatusHTTPsGetFailed,
			serve: func(t *testing.T) (string, *authRecorder, func()) {
				var changed atomic.Bool
				ts, rec := startTLS(t, bmc.Handler(), func() *tls.Certificate {
					if changed.Load() {
						return bad()
					}
					return good()
				})
				return hostOf(t, ts.URL), rec, func() { changed.Store(true); rec.reset() }
			}},
		{name: "redirect to another host", want: redfish.StatusVerificationFailed,
			serve: func(t *testing.T) (string, *authRecorder, func()) {
				target, rec := startTLS(t, bmc.Handler(), good)
				front, _ := startTLS(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					http.Redirect(w, r, target.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
				}), good)
				return hostOf(t, front.URL), rec, func() {}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, rec, arm := tc.serve(t)
			e := newCABundleEnv(t, bmcTLS.Certificates[0].Certificate[0])
			e.Must(201, "POST", "/Inventory/RedfishEndpoints", hsm.RedfishEndpoint{ID: bmcX, FQDN: addr, User: "root",
				Password: rfPassword, RediscoverOnUpdate: tc.first != ""})
			if tc.first != "" {
				if got := e.waitDiscovered(bmcX).DiscoveryInfo.LastDiscoveryStatus; got != string(tc.first) {
					t.Fatalf("first walk: LastDiscoveryStatus = %s, want %s", got, tc.first)
				}
			}
			arm()
			before := e.endpoint(bmcX).DiscoveryInfo
			e.Must(200, "PATCH", "/Inventory/RedfishEndpoints/"+bmcX, map[string]any{"RediscoverOnUpdate": true})
			if got := e.waitNewWalk(bmcX, before).DiscoveryInfo.LastDiscoveryStatus; got != string(tc.want) {
				t.Errorf("LastDiscoveryStatus = %s, want %s", got, tc.want)
			}
			if n := rec.count(); n > 0 {
				t.Errorf("a host whose certificate HSM did not verify for this endpoint received credentials %d times", n)
			}
		})
	}
}
