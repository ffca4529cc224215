package power

import (
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/power/pcs"
)

// BenchmarkPowerStatus10k: GET /power-status of 10,000 cached nodes
// through the handler (no sockets).
func BenchmarkPowerStatus10k(b *testing.B) {
	h := NewAPI(cached10k(), nil).Handler()
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/power-status", nil))
		if w.Code != 200 {
			b.Fatal(w.Code)
		}
	}
}

// cached10k is a Service whose cache holds 10,000 nodes, on.
func cached10k() *Service {
	svc := &Service{cache: newStatusCache()}
	sup := supportedTransitions(redfishsim.ResetTypes())
	for i := range 10000 {
		svc.cache.observe(redfishsim.DefaultXname(i)+"n0", pcs.PowerOn, sup)
	}
	return svc
}

// BenchmarkPowerStatusHTTP10k: p99 of GET /power-status of 10,000 cached
// nodes over loopback, through pcs's whole HTTP stack (httpserver.Serve:
// metrics, logging, gateway prefixes), against a bare net/http handler
// writing the same bytes (the ceiling), in the same run.
func BenchmarkPowerStatusHTTP10k(b *testing.B) {
	svc := cached10k()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := httpserver.Serve(ln, httpserver.WithPrefixes(NewAPI(svc, nil).Handler(), GatewayPrefixes()...),
		slog.New(slog.DiscardHandler), httpserver.NewRegistry())
	go func() { _ = srv.Run(b.Context()) }()
	raw := fetch(b, srv.URL()+"/power-status")
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(raw)
	}))
	defer bare.Close()
	var p99, bareP99 time.Duration
	for b.Loop() {
		p99, bareP99 = statusP99(b, srv.URL()+"/power-status", bare.URL, 10000)
	}
	b.ReportMetric(p99.Seconds()*1000, "ms-p99-status")
	b.ReportMetric(bareP99.Seconds()*1000, "ms-p99-ceiling-status")
	b.ReportMetric(bareP99.Seconds()/p99.Seconds(), "ratio-status")
}
