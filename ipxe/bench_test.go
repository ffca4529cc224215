package ipxe

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkBootscript is the handler cost of one known node's script, with
// 10,000 nodes cached (scripts/bench.d/bss.sh measures it over HTTP).
func BenchmarkBootscript(b *testing.B) {
	h := newHarness(b)
	const n = 10000
	nodes := make([]*Node, n)
	for i := range nodes {
		nodes[i] = node(fmt.Sprintf("x%dc0s%db0n%d", 1000+i/512, i/8%64, i%8), "Compute", "", i+1,
			[]string{fmt.Sprintf("02:00:00:00:%02x:%02x", i/256, i%256)})
	}
	h.nodes(nodes...)
	h.mustDo(b, http.MethodPut, "/boot/v1/bootparameters",
		`{"hosts":["Compute"],"kernel":"http://k/vmlinuz","initrd":"http://k/initrd","params":"console=ttyS0 quiet"}`, 200)
	handler := NewAPI(h.svc, nil, nil, Version).Handler()
	reqs := make([]*http.Request, n)
	for i := range reqs {
		reqs[i] = httptest.NewRequest(http.MethodGet, fmt.Sprintf("/boot/v1/bootscript?mac=02:00:00:00:%02x:%02x", i/256, i%256), nil)
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			rec := httptest.NewRecorder()
			handler.ServeHTTP(rec, reqs[i%n])
			if rec.Code != 200 {
				b.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			i++
		}
	})
}
