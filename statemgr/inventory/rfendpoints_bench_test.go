package inventory

import (
	"fmt"
	"testing"

	"github.com/hmsuite/hms/statemgr/hsm"
)

// benchRFRows returns n endpoint rows from the n-th BMC on, each with its
// own FQDN, as reds registers them.
func benchRFRows(from, n int) []rfRow {
	out := make([]rfRow, n)
	on := true
	for i := range out {
		k := from + i
		id := fmt.Sprintf("x%dc0s%db%d", 3000+k/128, (k/4)%32, k%4)
		out[i] = rfRow{ep: hsm.RedfishEndpoint{ID: id, Type: "NodeBMC", FQDN: id + ".hmn:8443", Enabled: &on}}
	}
	return out
}

// BenchmarkRFEndpointsByFQDN10k: with 10,000 endpoints registered, a POST
// of 100 more (each checked for a free FQDN) and a GET ?fqdn= of one.
func BenchmarkRFEndpointsByFQDN10k(b *testing.B) {
	s, _ := newTestStore(b)
	const held = 10_000
	if err := s.insertRFEndpoints(b.Context(), benchRFRows(0, held)); err != nil {
		b.Fatal(err)
	}
	b.Run("insert-100", func(b *testing.B) {
		next := held
		for b.Loop() {
			if err := s.insertRFEndpoints(b.Context(), benchRFRows(next, 100)); err != nil {
				b.Fatal(err)
			}
			next += 100
		}
	})
	b.Run("get-by-fqdn", func(b *testing.B) {
		fqdn := benchRFRows(held/2, 1)[0].ep.FQDN
		for b.Loop() {
			rows, err := s.rfEndpointRows(b.Context(), redfishEndpointFilter{FQDN: []string{fqdn}})
			if err != nil || len(rows) != 1 {
				b.Fatalf("%d rows, %v", len(rows), err)
			}
		}
	})
}
