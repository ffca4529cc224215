package redfish

import (
	"net/http/httptest"
	"testing"
)

// BenchmarkWalkRackmount1 walks one public-rackmount1 BMC over loopback,
// with a fresh transport per walk as in production (new connections, and
// for https a TLS handshake, every walk).
func BenchmarkWalkRackmount1(b *testing.B) {
	for _, bc := range []struct {
		name  string
		tls   bool
		limit int
	}{
		{name: "http/c1", limit: 1},
		{name: "http/c4", limit: 4},
		{name: "https/c4", tls: true, limit: 4},
	} {
		b.Run(bc.name, func(b *testing.B) {
			srv := httptest.NewUnstartedServer(newMockup("public-rackmount1"))
			scheme := "http"
			if bc.tls {
				srv.StartTLS()
				scheme = "https"
			} else {
				srv.Start()
			}
			defer srv.Close()
			ep := Endpoint{ID: "x3000c0s1b0", FQDN: srv.Listener.Addr().String(), Scheme: scheme}
			var reqs int
			b.ReportAllocs()
			for b.Loop() {
				res, err := Walk(b.Context(), ep, Options{MaxConcurrentRequests: bc.limit})
				if err != nil {
					b.Fatal(err)
				}
				reqs = res.Requests
			}
			b.ReportMetric(float64(reqs), "requests/walk")
		})
	}
}
