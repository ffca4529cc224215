package layout

import (
	"bytes"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/slsgen"
)

// benchNodes is the size of the synthetic system of the benchmarks.
const benchNodes = 100_000

func benchDump(b *testing.B) []byte {
	b.Helper()
	var buf bytes.Buffer
	if err := slsgen.Write(&buf, benchNodes); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// benchAPI returns the handler of an SLS holding the synthetic system.
func benchAPI(b *testing.B) http.Handler {
	b.Helper()
	s, err := OpenStore(b.Context(), filepath.Join(b.TempDir(), "sls.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if _, _, err := s.LoadState(b.Context(), bytes.NewReader(benchDump(b))); err != nil {
		b.Fatal(err)
	}
	return NewAPI(s, slog.New(slog.DiscardHandler), httpserver.NewRegistry()).Handler()
}

// BenchmarkLoadState100k loads the synthetic 100,000-node system (about
// 357,000 objects) over whatever the previous iteration loaded. Target: < 10 s.
func BenchmarkLoadState100k(b *testing.B) {
	dump := benchDump(b)
	s, err := OpenStore(b.Context(), filepath.Join(b.TempDir(), "sls.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.SetBytes(int64(len(dump)))
	for b.Loop() {
		n, _, err := s.LoadState(b.Context(), bytes.NewReader(dump))
		if err != nil || n < benchNodes {
			b.Fatalf("LoadState = %d, %v", n, err)
		}
	}
}

// discard is a ResponseWriter that only counts, so the benchmarks measure the
// handler and not a recorder's copying.
type discard struct {
	h      http.Header
	code   int
	nbytes int
}

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) WriteHeader(code int)        { d.code = code }
func (d *discard) Write(p []byte) (int, error) { d.nbytes += len(p); return len(p), nil }

// benchRequest serves path repeatedly and reports the 50th and 99th
// percentile latency of the handler.
func benchRequest(b *testing.B, h http.Handler, path string) {
	req, err := http.NewRequest("GET", path, nil)
	if err != nil {
		b.Fatal(err)
	}
	var lat []time.Duration
	size := 0
	for b.Loop() {
		w := &discard{h: http.Header{}}
		start := time.Now()
		h.ServeHTTP(w, req)
		lat = append(lat, time.Since(start))
		if w.code != 0 && w.code != http.StatusOK {
			b.Fatalf("GET %s = %d", path, w.code)
		}
		size = w.nbytes
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(size), "resp-bytes")
}

// BenchmarkQueries100k runs the read targets against one loaded copy of the
// synthetic 100,000-node system (loading it once takes longer than all of them):
//
//   - type_node returns all 100,000 nodes (target p99 < 50 ms);
//   - vendor_name finds port ethernet1/1/30 on every switch, 3,128 connectors
//     (target p99 < 50 ms);
//   - switch_port is hms-discovery's query for one port of one switch;
//   - get_hardware reads one node.
func BenchmarkQueries100k(b *testing.B) {
	h := benchAPI(b)
	for _, q := range []struct{ name, path string }{
		{"type_node", "/v1/search/hardware?type=comptype_node"},
		{"vendor_name", "/v1/search/hardware?extra_properties.VendorName=ethernet1/1/30"},
		{"switch_port", "/v1/search/hardware?type=comptype_mgmt_switch_connector&class=River&extra_properties.VendorName=ethernet1/1/30&parent=x1500c2w1"},
		{"get_hardware", "/v1/hardware/x1500c2s15b1n0"},
	} {
		b.Run(q.name, func(b *testing.B) { benchRequest(b, h, q.path) })
	}
}
