package power

import (
	"net/http/httptest"
	"testing"

	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/power/pcs"
)

// BenchmarkPowerStatus10k: GET /power-status of 10,000 cached nodes
// through the handler (no sockets).
func BenchmarkPowerStatus10k(b *testing.B) {
	svc := &Service{cache: newStatusCache()}
	sup := supportedTransitions(redfishsim.ResetTypes())
	for i := range 10000 {
		svc.cache.observe(redfishsim.DefaultXname(i)+"n0", pcs.PowerOn, sup)
	}
	h := NewAPI(svc, nil).Handler()
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/power-status", nil))
		if w.Code != 200 {
			b.Fatal(w.Code)
		}
	}
}
