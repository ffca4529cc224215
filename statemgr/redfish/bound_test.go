package redfish

import (
	"crypto/x509"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestWalkHangingBMC walks several BMCs at once; two hang (one before
// answering anything, one after the service root). Each hanging walk ends at
// its own timeout with HTTPsGetFailed; the others finish without waiting.
func TestWalkHangingBMC(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hang := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
		rootThenHang := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/redfish/v1" || r.URL.Path == "/redfish/v1/" {
				newMockup("public-rackmount1").ServeHTTP(w, r)
				return
			}
			<-r.Context().Done()
		})
		const timeout = 30 * time.Second
		bmcs := []struct {
			id   string
			h    http.Handler
			want Status
			took time.Duration
		}{
			{id: "x3000c0s1b0", h: newMockup("public-rackmount1"), want: StatusOK, took: 0},
			{id: "x3000c0s2b0", h: hang, want: StatusHTTPsGetFailed, took: timeout},
			{id: "x3000c0s3b0", h: newMockup("public-bladed"), want: StatusOK, took: 0},
			{id: "x3000c0s4b0", h: rootThenHang, want: StatusHTTPsGetFailed, took: timeout},
		}
		start := time.Now()
		got := make([]Result, len(bmcs))
		took := make([]time.Duration, len(bmcs))
		var wg sync.WaitGroup
		for i, b := range bmcs {
			wg.Go(func() {
				ep := Endpoint{ID: b.id, FQDN: b.id, Scheme: "http"}
				got[i], _ = Walk(t.Context(), ep, Options{Timeout: timeout, HTTPClient: &http.Client{Transport: inProcess{b.h}}})
				took[i] = time.Since(start)
			})
		}
		wg.Wait()
		for i, b := range bmcs {
			if got[i].Status != b.want || took[i] != b.took {
				t.Errorf("%s: status %s after %v, want %s after %v (errors %q)", b.id, got[i].Status, took[i], b.want, b.took, got[i].Errors)
			}
		}
	})
}

// TestWalkConcurrencyBound checks that no more than MaxConcurrentRequests
// requests are in flight (sent and body not yet closed) at any time.
func TestWalkConcurrencyBound(t *testing.T) {
	for _, limit := range []int{1, 2, 3} {
		t.Run(strings.Repeat("x", limit), func(t *testing.T) {
			c := &bodyCounter{base: inProcess{newMockup("public-rackmount1")}}
			res, err := Walk(t.Context(), Endpoint{ID: "x3000c0s1b0", FQDN: "bmc", Scheme: "http"},
				Options{MaxConcurrentRequests: limit, HTTPClient: &http.Client{Transport: c}})
			if err != nil {
				t.Fatal(err)
			}
			if c.maxInFlight < 1 || c.maxInFlight > limit {
				t.Errorf("max in flight %d, limit %d", c.maxInFlight, limit)
			}
			if c.opened != res.Requests || c.closed != c.opened {
				t.Errorf("bodies: %d opened, %d closed, %d requests", c.opened, c.closed, res.Requests)
			}
		})
	}
}

// TestWalkTLS covers the default transport: HTTPS without certificate checks
// unless a CA pool is given, plain HTTP on request, and a BMC that drops connections.
func TestWalkTLS(t *testing.T) {
	tlsSrv := httptest.NewUnstartedServer(newMockup("public-rackmount1"))
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the failing cases are expected
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	good := x509.NewCertPool()
	good.AddCert(tlsSrv.Certificate())
	// A listener that drops every connection stands for a dead BMC; a closed
	// port could be reused by another process on this shared machine.
	drop, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer drop.Close()
	go func() {
		for {
			c, err := drop.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	host := tlsSrv.Listener.Addr().String()
	for _, tc := range []struct {
		name string
		ep   Endpoint
		want Status
	}{
		{name: "insecure by default", ep: Endpoint{FQDN: host}, want: StatusOK},
		{name: "trusted CA", ep: Endpoint{FQDN: host, RootCAs: good}, want: StatusOK},
		{name: "untrusted CA", ep: Endpoint{FQDN: host, RootCAs: x509.NewCertPool()}, want: StatusHTTPsGetFailed},
		{name: "http to https port", ep: Endpoint{FQDN: host, Scheme: "http"}, want: StatusHTTPsGetFailed},
		{name: "connection dropped", ep: Endpoint{IPAddress: drop.Addr().String()}, want: StatusHTTPsGetFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.ep.ID = "x3000c0s1b0"
			res, _ := Walk(t.Context(), tc.ep, Options{})
			if res.Status != tc.want {
				t.Errorf("Status = %s, want %s (errors %q)", res.Status, tc.want, res.Errors)
			}
		})
	}
}

// TestMeterCloseAll checks the meter's guarantee: a body nobody closed is
// closed by closeAll, and its concurrency slot is given back.
func TestMeterCloseAll(t *testing.T) {
	m := newMeter(inProcess{newMockup("public-rackmount1")}, 1)
	c := &http.Client{Transport: m}
	resp, err := c.Get("http://bmc/redfish/v1")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp // deliberately left open
	if req, open := m.stats(); req != 1 || open != 1 {
		t.Fatalf("stats = %d requests, %d open; want 1, 1", req, open)
	}
	if n := m.closeAll(); n != 1 {
		t.Errorf("closeAll closed %d bodies, want 1", n)
	}
	resp, err = c.Get("http://bmc/redfish/v1") // would block forever if the slot leaked
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, open := m.stats(); open != 0 {
		t.Errorf("%d bodies open after Close", open)
	}
}
