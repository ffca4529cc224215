package layout

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/xname"
)

func TestParseHardwareSearch(t *testing.T) {
	tests := []struct {
		raw     string
		want    HardwareQuery
		wantErr bool
	}{
		{raw: "", want: HardwareQuery{}},
		{raw: "xname=X3000C0S01B0N0&class=mountain", want: HardwareQuery{Xname: "x3000c0s1b0n0", Class: Mountain}},
		{raw: "parent=x3000c0w14&type=comptype_mgmt_switch_connector&extra_properties.VendorName=ethernet1/1/36",
			want: HardwareQuery{Parent: "x3000c0w14", Type: "comptype_mgmt_switch_connector",
				Props: []PropMatch{{Fields: []string{"VendorName"}, Value: "ethernet1/1/36"}}}},
		{raw: "power_connector=x1000m0p0v01", want: HardwareQuery{
			Props: []PropMatch{{Fields: []string{"PowerConnector", "PowerConenctor"}, Value: "x1000m0p0v1"}}}},
		{raw: "networks=HMN&peers=x1c0s1b0", want: HardwareQuery{Props: []PropMatch{
			{Fields: []string{"Networks"}, Value: "HMN"}, {Fields: []string{"Peers"}, Value: "x1c0s1b0"}}}},
		{raw: "node_nics=nope", wantErr: true},
		{raw: "object=x1&object=x2", wantErr: true},
		{raw: "nid=1", wantErr: true},
		{raw: "extra_properties.Password=x", wantErr: true},
		{raw: "%", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			got, err := ParseHardwareSearch(tt.raw)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); !tt.wantErr && diff != "" {
				t.Errorf("query (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzParseSearch checks that neither search parser panics and that an
// accepted hardware query holds only normalised, valid values.
func FuzzParseSearch(f *testing.F) {
	for _, s := range []string{"", "type=comptype_node", "parent=x3000c0w14&extra_properties.VendorName=ethernet1/1/36",
		"xname=X01c0&class=HILL", "power_connector=x1m0p0v1", "ip_address=10.0.0.1&name=HMN", "%zz", "a=b&a=c",
		"extra_properties.=", "extra_properties.SNMPPrivPassword=x", "type=comptype_ncard;class=River"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		_, _ = ParseNetworkSearch(raw)
		q, err := ParseHardwareSearch(raw)
		if err != nil {
			return
		}
		for _, x := range []string{q.Xname, q.Parent} {
			if x != "" && (!xname.Valid(x) || xname.Normalize(x) != x) {
				t.Errorf("accepted xname %q is not valid and normalised", x)
			}
		}
		if q.Type != "" {
			if _, ok := xname.FromSLSType(q.Type); !ok {
				t.Errorf("accepted unknown type %q", q.Type)
			}
		}
		if q.Class != "" {
			if _, err := ParseClass(string(q.Class)); err != nil {
				t.Errorf("accepted class %q", q.Class)
			}
		}
		for _, p := range q.Props {
			if p.Value == "" || len(p.Fields) == 0 || p.Fields[0] == "" || secret(p.Fields[0]) {
				t.Errorf("accepted property match %+v", p)
			}
		}
	})
}

// FuzzParseExtra checks that ExtraProperties parsing never panics, and that
// what it accepts is a compact JSON object holding the same data.
func FuzzParseExtra(f *testing.F) {
	for _, s := range []string{`{"NID":1,"Role":"Compute"}`, `{"NodeNics":["x1c0s1b0"],"VendorName":"ethernet1/1/1"}`,
		`{"Networks":{"cn":{"HMN":{"VLan":3}}}}`, `null`, `[]`, `{"a":{"b":[1,"x",true]}}`, `{"NID":-1}`, `{"Aliases":"x"}`} {
		f.Add(s)
	}
	types := []xname.Type{xname.Node, xname.MgmtSwitchConnector, xname.Cabinet, xname.MgmtSwitch, xname.NodeBMC}
	f.Fuzz(func(t *testing.T, raw string) {
		for _, typ := range types {
			out, _, err := parseExtra(typ, []byte(raw), interner{})
			if err != nil || out == nil {
				continue
			}
			var in, back any
			if json.Unmarshal([]byte(raw), &in) != nil {
				t.Fatalf("accepted invalid JSON %q", raw)
			}
			if err := json.Unmarshal(out, &back); err != nil {
				t.Fatalf("output %q is not JSON: %v", out, err)
			}
			if !cmp.Equal(in, back) {
				t.Errorf("parseExtra changed the data: %q -> %q", raw, out)
			}
		}
	})
}

// FuzzDumpEntries checks the in-place dump walker on any valid JSON: it must
// not panic, and every entry it accepts must be a valid, normalised object.
func FuzzDumpEntries(f *testing.F) {
	f.Add(`{"x1":{"Class":"River"}}`)
	f.Add(`{"x1c0s1b0n0":{"Xname":"X1C0S1B0N0","Class":"mountain","ExtraProperties":{"NID":1,"Aliases":["a"]}}}`)
	f.Add(`{"x1":{"Class":"River","ExtraProperties":{ "a" : [ 1 , "b\"c" , {"d":null} ] }}}`)
	f.Add(`{"x1":[],"x2":{"Class":7}}`)
	f.Fuzz(func(t *testing.T, raw string) {
		if !json.Valid([]byte(raw)) || raw[0] != '{' {
			return
		}
		entries, err := dumpEntries([]byte(raw), testNow)
		if err != nil {
			return
		}
		for _, e := range entries {
			if !xname.Valid(e.xname) || xname.Normalize(e.xname) != e.xname {
				t.Errorf("accepted xname %q", e.xname)
			}
			if e.extra != nil && !json.Valid(e.extra) {
				t.Errorf("%s: stored ExtraProperties %q are not JSON", e.xname, e.extra)
			}
		}
	})
}
