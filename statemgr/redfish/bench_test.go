package redfish

import (
	"context"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
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

// BenchmarkWalkMany walks 200 public-rackmount1 BMCs (one loopback server)
// with 64 walks at a time, an early look at the 1,000-BMC discovery target.
func BenchmarkWalkMany(b *testing.B) {
	const bmcs, workers = 200, 64
	srv := httptest.NewServer(newMockup("public-rackmount1"))
	defer srv.Close()
	ep := Endpoint{ID: "x3000c0s1b0", FQDN: srv.Listener.Addr().String(), Scheme: "http"}
	for b.Loop() {
		start := time.Now()
		jobs := make(chan struct{})
		var wg sync.WaitGroup
		var mu sync.Mutex
		failed := 0
		for range workers {
			wg.Go(func() {
				for range jobs {
					ctx, cancel := context.WithTimeout(b.Context(), time.Minute)
					if _, err := Walk(ctx, ep, Options{}); err != nil {
						mu.Lock()
						failed++
						mu.Unlock()
					}
					cancel()
				}
			})
		}
		for range bmcs {
			jobs <- struct{}{}
		}
		close(jobs)
		wg.Wait()
		if failed > 0 {
			b.Fatalf("%d of %d walks failed", failed, bmcs)
		}
		b.ReportMetric(float64(bmcs)/time.Since(start).Seconds(), "bmcs/s")
	}
}
