package statemgr

import (
	"net/url"
	"testing"

	"github.com/hmsuite/hms/statemgr/hsm"
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

// FuzzNewRecord feeds arbitrary component fields to the POST validator: what
// it accepts always has an ID, a Type, a State and a Flag.
func FuzzNewRecord(f *testing.F) {
	f.Add("x0c0s0b0n0", "Node", "on", "warn", "compute", "X86")
	f.Add("s0", "", "", "", "", "")
	f.Fuzz(func(t *testing.T, id, typ, state, flag, role, arch string) {
		r, err := newRecord("c", hsm.Component{ID: id, Type: typ, State: state, Flag: flag, Role: role, Arch: arch}, core.NewVocab().Get())
		if err != nil {
			return
		}
		if r.State == "" || r.Flag == "" || r.Type == "" || r.ID == "" {
			t.Fatalf("accepted record with empty fields: %+v", r)
		}
	})
}
