package core_test

import (
	"net/url"
	"testing"

	"github.com/hmsuite/hms/statemgr/internal/core"
)

// FuzzParseFilter feeds arbitrary query strings to the component filter
// parser and the encoder: no panics, and a filter that parses can be run.
func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{"type=Node&state=!Ready", "nid_start=1&nid_end=9&nid=3", "id=x0c0s0b0n0&stateonly",
		"enabled=false&flag=warn", "partition=p1&group=g", "role=compute&subrole=%00"} {
		f.Add(s)
	}
	recs := []*core.Record{{ID: "x0c0s0b0n0", Type: "Node", State: "Ready", Flag: "OK", Enabled: true, NID: 1, HasNID: true, Role: "Compute"},
		{ID: "x0c0s0b0", Type: "NodeBMC", State: "Off", Flag: "OK", SoftwareStatus: "a\"b\u2028"}}
	f.Fuzz(func(t *testing.T, q string) {
		v, err := url.ParseQuery(q)
		if err != nil {
			return
		}
		flt, err := core.ParseFilter(v, core.NewVocab())
		if err != nil {
			return
		}
		b := core.EncodeList(recs, &flt)
		if len(b) == 0 || b[0] != '{' {
			t.Fatalf("bad encoding %q", b)
		}
	})
}
