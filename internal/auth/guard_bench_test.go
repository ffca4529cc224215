package auth

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// nop is the daemon behind the benchmarked guard: it answers 204 and does
// nothing else, so an op is the guard's own cost.
type nop struct{}

func (nop) ServeHTTP(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }

// discard is a response writer that keeps nothing, so the recorder's
// allocations are not counted as the guard's.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}

// BenchmarkGuard is the guard's cost per request: an open route without a
// token (bss's boot script, ~35,000 requests a second), a read route with a
// viewer's token presented again (found in the token cache), the same
// without the cache (the signature check dominates), and a route the table
// lacks, refused.
func BenchmarkGuard(b *testing.B) {
	is := newTestIssuer(b)
	g := newGuard(is.verifier(is.config()), false, testTable(), nop{}, nil, prometheus.NewRegistry())
	uncached := is.verifier(is.config())
	uncached.cache = nil
	gu := newGuard(uncached, false, testTable(), nop{}, nil, prometheus.NewRegistry())
	viewer := "Bearer " + is.sign("ec", claims{"sub": "v", "roles": []string{"viewer"}})
	for _, bc := range []struct {
		name, path, auth string
		g                *guard
	}{
		{name: "open", path: "/v1/health", g: g},
		{name: "read", path: "/v1/things", auth: viewer, g: g},
		{name: "read_uncached", path: "/v1/things", auth: viewer, g: gu},
		{name: "unlisted", path: "/v1/secret", g: g},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r := httptest.NewRequest(http.MethodGet, bc.path, nil)
			if bc.auth != "" {
				r.Header.Set("Authorization", bc.auth)
			}
			w := &discard{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				clear(w.h)
				bc.g.ServeHTTP(w, r)
			}
		})
	}
}
