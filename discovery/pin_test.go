package discovery

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/auth/authtest"
)

// spoofer is a device at host:port with a TLS key of its own that counts
// the requests carrying credentials it receives.
func spoofer(t *testing.T, host string, port int) *atomic.Int32 {
	t.Helper()
	var creds atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			creds.Add(1)
		}
		w.WriteHeader(http.StatusUnauthorized)
	}))
	ln, err := net.Listen("tcp", net.JoinHostPort(host, fmt.Sprint(port)))
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = ln
	srv.EnableHTTP2 = true // offered, as a BMC may
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return &creds
}

// presentedKey is the pin of the key the TLS server at addr presents.
func presentedKey(t *testing.T, addr string) string {
	t.Helper()
	c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // reads the key only
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return connKey(c.ConnectionState())
}

// TestTLSKeyPinned: a BMC's TLS key is pinned at its registration. A
// device spoofing its MAC, leased another address while the switch still
// shows the BMC's port, presents another key: nothing is sent to it (no
// stored password, no factory one), the attempt is bmc_refused saying
// so and counted, HSM keeps the real BMC. Only an admin token reds
// verified clears the pin (DELETE /v1/endpoints/{xname}/tls-key); the
// next attempt then logs in there again.
func TestTLSKeyPinned(t *testing.T) {
	clock := newFakeClock()
	s := newRiver(t, 1, Config{Now: clock.Now})
	ctx := t.Context()
	x, mac := s.bmcs[0].BMC.Xname(), s.bmcMAC(0)
	e, err := s.store.Get(ctx, x)
	if want := presentedKey(t, s.bmcs[0].Addr); err != nil || e.Key != want {
		t.Fatalf("pinned key %q, %v; want %q", e.Key, err, want)
	}

	fake := fmt.Sprintf("127.79.%d.1", s.port%200+1)
	creds := spoofer(t, fake, s.port)
	s.lease(mac, fake)
	o := s.waitFor(mac)
	if !errors.Is(o.err, errKeyChanged) || reasonOf(o.err) != ReasonBMC {
		t.Fatalf("spoofed MAC at %s: %+v (%v), want refused for its TLS key", fake, o, o.err)
	}
	if n := creds.Load(); n != 0 {
		t.Errorf("the spoofer received %d requests with credentials", n)
	}
	if n := testutil.ToFloat64(s.svc.m.keyChanged); n != 1 {
		t.Errorf("reds_bmc_tls_key_changed_total %v, want 1", n)
	}
	if ep, err := s.hsm.RedfishEndpoint(ctx, x); err != nil || ep.IPAddress != s.bmcIP(0) {
		t.Errorf("HSM's endpoint %+v, %v; want it at %s still", ep, err, s.bmcIP(0))
	}

	is := authtest.New(t)
	api := NewAPI(s.svc, s.store, nil, "")
	guarded, err := is.Config().Wrap(api.Handler(), AuthTable(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		h     http.Handler
		token string
		want  int
	}{
		{name: "tokens off", h: api.Handler(), want: http.StatusForbidden},
		{name: "no token", h: guarded, want: http.StatusUnauthorized},
		{name: "operator", h: guarded, token: is.Token("otto", auth.Operator), want: http.StatusForbidden},
		{name: "admin, unknown BMC", h: guarded, token: is.Token("ada", auth.Admin), want: http.StatusNotFound},
		{name: "admin, xname spelt otherwise", h: guarded, token: is.Token("ada", auth.Admin), want: http.StatusNoContent},
	} {
		t.Run(tt.name, func(t *testing.T) {
			target := x
			switch tt.want {
			case http.StatusNotFound:
				target = "x3000c0s9b0"
			case http.StatusNoContent: // as HMS takes xnames: any case
				target = strings.ToUpper(x)
			}
			req := httptest.NewRequest("DELETE", "/v1/endpoints/"+target+"/tls-key", nil)
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			w := httptest.NewRecorder()
			tt.h.ServeHTTP(w, req)
			if w.Code != tt.want {
				t.Errorf("DELETE: %d %s, want %d", w.Code, w.Body, tt.want)
			}
		})
	}
	if e, err := s.store.Get(ctx, x); err != nil || e.Key != "" || e.State != StateRegistered {
		t.Fatalf("after the admin's DELETE: key %q, state %s, %v; want none, registered", e.Key, e.State, err)
	}
	clock.Add(time.Hour) // the retry is due
	s.svc.requeueDue()
	if o := s.waitFor(mac); errors.Is(o.err, errKeyChanged) || creds.Load() == 0 {
		t.Errorf("after the pin was cleared: %+v (%v), %d requests with credentials; want logged in to", o, o.err, creds.Load())
	}
}

// TestTLSKeyPinnedAtPresence: a BMC registered without a pin (before reds
// pinned keys) is pinned by the next presence round, at the address it is
// registered at; a device spoofing its MAC afterwards is sent nothing.
func TestTLSKeyPinnedAtPresence(t *testing.T) {
	s := newRiver(t, 1, Config{})
	ctx := t.Context()
	x, mac := s.bmcs[0].BMC.Xname(), s.bmcMAC(0)
	if err := s.store.ClearKey(ctx, x); err != nil {
		t.Fatal(err)
	}
	s.svc.CheckPresence(ctx)
	if e, err := s.store.Get(ctx, x); err != nil || e.Key != presentedKey(t, s.bmcs[0].Addr) {
		t.Fatalf("key after a presence round %q, %v; want the BMC's", e.Key, err)
	}
	fake := fmt.Sprintf("127.79.%d.1", s.port%200+1)
	creds := spoofer(t, fake, s.port)
	s.lease(mac, fake)
	if o := s.waitFor(mac); !errors.Is(o.err, errKeyChanged) || creds.Load() != 0 {
		t.Errorf("spoofed MAC: %+v (%v), %d requests with credentials; want refused, none", o, o.err, creds.Load())
	}
}
