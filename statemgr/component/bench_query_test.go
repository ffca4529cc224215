package component_test

import (
	"encoding/json"
	"net/url"
	"testing"

	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
)

// BenchmarkQueryByID100k: the component queries that name their
// components, over 100,000 nodes, as a boot storm's services send them:
// their cost should follow the components named, not the components held.
func BenchmarkQueryByID100k(b *testing.B) {
	_, h, comps := benchAPI(b, 100_000)
	ids := hsmtest.IDsOf(comps)
	q := url.Values{}
	for i := range 10 {
		q.Add("id", ids[i*9973])
	}
	query, _ := json.Marshal(map[string]any{"ComponentIDs": ids[40_000:41_000]})
	byNID := []byte(`{"NIDRanges":["1-24","30","50000-50100"],"stateonly":true}`)
	c := hsm.Base + "/State/Components"
	cases := []struct {
		name, method, path string
		body               []byte
	}{
		{name: "GET-10-ids", method: "GET", path: c + "?" + q.Encode()},
		{name: "POST-Query-1000-ids", method: "POST", path: c + "/Query", body: query},
		{name: "POST-ByNID-Query-127", method: "POST", path: c + "/ByNID/Query", body: byNID},
		{name: "GET-Query-slot", method: "GET", path: c + "/Query/" + ids[50_000][:len("x1097c5s2")]},
	}
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			cpu := hsmtest.CPUTime()
			for b.Loop() {
				serve(b, h, bc.method, bc.path, bc.body, 200)
			}
			reportCPU(b, cpu)
		})
	}
}
