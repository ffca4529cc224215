package xname

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// validCase is one valid xname per type, with what Parse must make of it.
type validCase struct {
	in     string
	typ    Type
	parent string
	sls    string
	nums   []int
}

var validCases = []validCase{
	{in: "s0", typ: System, sls: "any", nums: []int{0}},
	{in: "sms1", typ: SMSBox, sls: "comptype_ncn_box", nums: []int{1}},
	{in: "p0", typ: Partition, nums: []int{0}},
	{in: "p1.2", typ: Partition, nums: []int{1, 2}},
	{in: "all", typ: TypeAll, nums: []int{}},
	{in: "all_comp", typ: TypeAllComp, nums: []int{}},
	{in: "all_svc", typ: TypeAllSvc, nums: []int{}},
	{in: "d1", typ: CDU, parent: "s0", sls: "comptype_cdu", nums: []int{1}},
	{in: "d1w0", typ: CDUMgmtSwitch, parent: "d1", sls: "comptype_cdu_mgmt_switch", nums: []int{1, 0}},
	{in: "x3000", typ: Cabinet, parent: "s0", sls: "comptype_cabinet", nums: []int{3000}},
	{in: "x3000d1", typ: CabinetCDU, parent: "x3000", nums: []int{3000, 1}},
	{in: "x3000b0", typ: CabinetBMC, parent: "x3000", nums: []int{3000, 0}},
	{in: "x3000e1", typ: CEC, parent: "x3000", nums: []int{3000, 1}},
	{in: "x3000m3", typ: CabinetPDUController, parent: "x3000", sls: "comptype_cab_pdu_controller", nums: []int{3000, 3}},
	{in: "x3000m0p7", typ: CabinetPDU, parent: "x3000m0", sls: "comptype_cab_pdu", nums: []int{3000, 0, 7}},
	{in: "x3000m0i3", typ: CabinetPDUNic, parent: "x3000m0", nums: []int{3000, 0, 3}},
	{in: "x3000m0p0j24", typ: CabinetPDUOutlet, parent: "x3000m0p0", nums: []int{3000, 0, 0, 24}},
	{in: "x3000m0p0v1", typ: CabinetPDUPowerConnector, parent: "x3000m0p0", nums: []int{3000, 0, 0, 1}},
	{in: "x1000c7", typ: Chassis, parent: "x1000", sls: "comptype_chassis", nums: []int{1000, 7}},
	{in: "x1000c1b0", typ: ChassisBMC, parent: "x1000c1", sls: "comptype_chassis_bmc", nums: []int{1000, 1, 0}},
	{in: "x1000c1b0i3", typ: ChassisBMCNic, parent: "x1000c1b0", nums: []int{1000, 1, 0, 3}},
	{in: "x1000c1t9", typ: CMMRectifier, parent: "x1000c1", nums: []int{1000, 1, 9}},
	{in: "x1000c1f0", typ: CMMFpga, parent: "x1000c1", nums: []int{1000, 1, 0}},
	{in: "x1000c1s7", typ: ComputeModule, parent: "x1000c1", sls: "comptype_compmod", nums: []int{1000, 1, 7}},
	{in: "x1000c1s7v2", typ: NodePowerConnector, parent: "x1000c1s7", sls: "comptype_compmod_power_connector", nums: []int{1000, 1, 7, 2}},
	{in: "x1000c1s7j1", typ: NodePowerConnector, parent: "x1000c1s7", sls: "comptype_compmod_power_connector", nums: []int{1000, 1, 7, 1}},
	{in: "x1000c1s7b1", typ: NodeBMC, parent: "x1000c1s7", sls: "comptype_ncard", nums: []int{1000, 1, 7, 1}},
	{in: "x1000c1s7b1i3", typ: NodeBMCNic, parent: "x1000c1s7b1", sls: "comptype_bmc_nic", nums: []int{1000, 1, 7, 1, 3}},
	{in: "x1000c1s7b1f0", typ: NodeFpga, parent: "x1000c1s7b1", nums: []int{1000, 1, 7, 1, 0}},
	{in: "x1000c1s7e2", typ: NodeEnclosure, parent: "x1000c1s7", nums: []int{1000, 1, 7, 2}},
	{in: "x1000c1s7e2t1", typ: NodeEnclosurePowerSupply, parent: "x1000c1s7e2", nums: []int{1000, 1, 7, 2, 1}},
	{in: "x1000c1s7b1n0", typ: Node, parent: "x1000c1s7b1", sls: "comptype_node", nums: []int{1000, 1, 7, 1, 0}},
	{in: "x1000c1s7b1n0v12", typ: VirtualNode, parent: "x1000c1s7b1n0", sls: "comptype_virtual_node", nums: []int{1000, 1, 7, 1, 0, 12}},
	{in: "x1000c1s7b1n0p3", typ: Processor, parent: "x1000c1s7b1n0", nums: []int{1000, 1, 7, 1, 0, 3}},
	{in: "x1000c1s7b1n0d15", typ: Memory, parent: "x1000c1s7b1n0", nums: []int{1000, 1, 7, 1, 0, 15}},
	{in: "x1000c1s7b1n0a3", typ: NodeAccel, parent: "x1000c1s7b1n0", nums: []int{1000, 1, 7, 1, 0, 3}},
	{in: "x1000c1s7b1n0r7", typ: NodeAccelRiser, parent: "x1000c1s7b1n0", nums: []int{1000, 1, 7, 1, 0, 7}},
	{in: "x1000c1s7b1n0i3", typ: NodeNic, parent: "x1000c1s7b1n0", nums: []int{1000, 1, 7, 1, 0, 3}},
	{in: "x1000c1s7b1n0h3", typ: NodeHsnNic, parent: "x1000c1s7b1n0", sls: "comptype_node_hsn_nic", nums: []int{1000, 1, 7, 1, 0, 3}},
	{in: "x1000c1s7b1n0g2", typ: StorageGroup, parent: "x1000c1s7b1n0", nums: []int{1000, 1, 7, 1, 0, 2}},
	{in: "x1000c1s7b1n0g2k5", typ: Drive, parent: "x1000c1s7b1n0g2", nums: []int{1000, 1, 7, 1, 0, 2, 5}},
	{in: "x1000c1r3", typ: RouterModule, parent: "x1000c1", sls: "comptype_rtrmod", nums: []int{1000, 1, 3}},
	{in: "x1000c1r3b0", typ: RouterBMC, parent: "x1000c1r3", sls: "comptype_rtr_bmc", nums: []int{1000, 1, 3, 0}},
	{in: "x1000c1r3b0i3", typ: RouterBMCNic, parent: "x1000c1r3b0", nums: []int{1000, 1, 3, 0, 3}},
	{in: "x1000c1r3f1", typ: RouterFpga, parent: "x1000c1r3", nums: []int{1000, 1, 3, 1}},
	{in: "x1000c1r3t4", typ: RouterTOR, parent: "x1000c1r3", nums: []int{1000, 1, 3, 4}},
	{in: "x1000c1r3t4f1", typ: RouterTORFpga, parent: "x1000c1r3t4", nums: []int{1000, 1, 3, 4, 1}},
	{in: "x1000c1r3v2", typ: RouterPowerConnector, parent: "x1000c1r3", nums: []int{1000, 1, 3, 2}},
	{in: "x1000c1r3e0", typ: HSNBoard, parent: "x1000c1r3", nums: []int{1000, 1, 3, 0}},
	{in: "x1000c1r3a3", typ: HSNAsic, parent: "x1000c1r3", nums: []int{1000, 1, 3, 3}},
	{in: "x1000c1r3a3l40", typ: HSNLink, parent: "x1000c1r3a3", nums: []int{1000, 1, 3, 3, 40}},
	{in: "x1000c1r3j16", typ: HSNConnector, parent: "x1000c1r3", sls: "comptype_hsn_connector", nums: []int{1000, 1, 3, 16}},
	{in: "x1000c1r3j16p2", typ: HSNConnectorPort, parent: "x1000c1r3j16", sls: "comptype_hsn_connector_port", nums: []int{1000, 1, 3, 16, 2}},
	{in: "x3000c0w14", typ: MgmtSwitch, parent: "x3000c0", sls: "comptype_mgmt_switch", nums: []int{3000, 0, 14}},
	{in: "x3000c0w14j48", typ: MgmtSwitchConnector, parent: "x3000c0w14", sls: "comptype_mgmt_switch_connector", nums: []int{3000, 0, 14, 48}},
	{in: "x3000c0h33", typ: MgmtHLSwitchEnclosure, parent: "x3000c0", nums: []int{3000, 0, 33}},
	{in: "x3000c0h33s9", typ: MgmtHLSwitch, parent: "x3000c0h33", sls: "comptype_hl_switch", nums: []int{3000, 0, 33, 9}},
}

func TestParseEveryType(t *testing.T) {
	seen := map[Type]bool{}
	for _, tc := range validCases {
		seen[tc.typ] = true
		t.Run(tc.in, func(t *testing.T) {
			x, err := Parse(tc.in)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			got := validCase{in: x.String(), typ: x.Type(), parent: Parent(tc.in), sls: x.Type().SLSType(), nums: x.Numbers()}
			if diff := cmp.Diff(tc, got, cmp.AllowUnexported(validCase{})); diff != "" {
				t.Errorf("Parse(%q) mismatch (-want +got):\n%s", tc.in, diff)
			}
			if p, ok := x.Parent(); ok != (tc.parent != "") || p.String() != tc.parent || ok && p.Type() != tc.typ.Parent() {
				t.Errorf("Xname.Parent() = %q (%s), %v; want %q (%s)", p, p.Type(), ok, tc.parent, tc.typ.Parent())
			}
			if !Valid(tc.in) || TypeOf(tc.in) != tc.typ {
				t.Errorf("Valid/TypeOf(%q) = %v/%s, want true/%s", tc.in, Valid(tc.in), TypeOf(tc.in), tc.typ)
			}
		})
	}
	for _, typ := range Types() {
		if !seen[typ] {
			t.Errorf("no test case for type %s", typ)
		}
	}
}

func TestParseInvalid(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{in: "", want: `xname "": empty`},
		{in: " \t\n", want: `xname " \t\n": empty`},
		{in: "foo", want: `xname "foo": not a valid xname`},
		{in: "x", want: `xname "x": missing cabinet number`},
		{in: "s", want: `xname "s": missing system number`},
		{in: "sms", want: `xname "sms": missing SMS box number`},
		{in: "p", want: `xname "p": missing partition number`},
		{in: "p1.", want: `xname "p1.": missing partition number`},
		{in: "p1.2.3", want: `xname "p1.2.3": unexpected character "."`},
		{in: "p1x2", want: `xname "p1x2": unexpected "x" after Partition`},
		{in: "s1", want: `xname "s1": system number 1 must be 0`},
		{in: "s0x1", want: `xname "s0x1": unexpected "x" after System`},
		{in: "sm1", want: `xname "sm1": not a valid xname`},
		{in: "sms1c0", want: `xname "sms1c0": unexpected "c" after SMSBox`},
		{in: "1x3000", want: `xname "1x3000": not a valid xname`},
		{in: "x10000", want: `xname "x10000": cabinet number 10000 out of range 0-9999`},
		{in: "x99999999999999999999", want: `xname "x99999999999999999999": cabinet number 99999999999999999999 out of range 0-9999`},
		{in: "x1c0s99999999999999999999", want: `xname "x1c0s99999999999999999999": slot number 99999999999999999999 is too large`},
		{in: "x1c0s2147483648", want: `xname "x1c0s2147483648": slot number 2147483648 is too large`},
		{in: "x1c9", want: `xname "x1c9": chassis number 9 out of range 0-7`},
		{in: "x1c0b1", want: `xname "x1c0b1": chassis BMC number 1 must be 0`},
		{in: "x1c0w0", want: `xname "x1c0w0": management switch number 0 must be at least 1`},
		{in: "x1c0w1j0", want: `xname "x1c0w1j0": management switch connector number 0 must be at least 1`},
		{in: "x1c0h0", want: `xname "x1c0h0": high-level switch enclosure number 0 must be at least 1`},
		{in: "x1c0h1s10", want: `xname "x1c0h1s10": high-level switch number 10 out of range 1-9`},
		{in: "x1c0s0v3", want: `xname "x1c0s0v3": node power connector number 3 out of range 1-2`},
		{in: "x1c0s0j0", want: `xname "x1c0s0j0": node power connector number 0 out of range 1-2`},
		{in: "x1m4", want: `xname "x1m4": PDU controller number 4 out of range 0-3`},
		{in: "x1m0p0j0", want: `xname "x1m0p0j0": PDU outlet number 0 must be at least 1`},
		{in: "x1c0s0b0n0p4", want: `xname "x1c0s0b0n0p4": processor number 4 out of range 0-3`},
		{in: "x1c0r0j1p3", want: `xname "x1c0r0j1p3": HSN connector port number 3 out of range 0-2`},
		{in: "c0x1", want: `xname "c0x1": not a valid xname`},
		{in: "x1s0", want: `xname "x1s0": unexpected "s" after Cabinet`},
		{in: "x1c0b0n0", want: `xname "x1c0b0n0": unexpected "n" after ChassisBMC`},
		{in: "x1c0s0n0", want: `xname "x1c0s0n0": unexpected "n" after ComputeModule`},
		{in: "x1c", want: `xname "x1c": missing chassis number`},
		{in: "x1cc0", want: `xname "x1cc0": missing chassis number`},
		{in: "x1c0s0b0n0x", want: `xname "x1c0s0b0n0x": unexpected "x" after Node`},
		{in: "x1c0s0b0n0g0k0k0", want: `xname "x1c0s0b0n0g0k0k0": unexpected "k" after Drive`},
		{in: "x1c0-", want: `xname "x1c0-": unexpected character "-"`},
		{in: "x1c0 s0", want: `xname "x1c0 s0": unexpected character " "`},
		{in: "x1c0é", want: `xname "x1c0é": unexpected character "é"`},
		{in: "x1c0s0b0n0g0\u212a0", want: "xname \"x1c0s0b0n0g0\u212a0\": unexpected character \"\u212a\""}, // Kelvin sign, not k
		{in: "all_", want: `xname "all_": not a valid xname`},
		{in: "all_comp1", want: `xname "all_comp1": not a valid xname`},
		{in: "allcomp", want: `xname "allcomp": not a valid xname`},
		{in: "x1:1", want: `xname "x1:1": unexpected character ":"`},
		{in: strings.Repeat("x", 100), want: `xname "` + strings.Repeat("x", 64) + `...": missing cabinet number`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			x, err := Parse(tc.in)
			if err == nil {
				t.Fatalf("Parse(%q) = %q, want error", tc.in, x)
			}
			if got := err.Error(); got != tc.want {
				t.Errorf("Parse(%q) error = %s, want %s", tc.in, got, tc.want)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("errors.Is(%v, ErrInvalid) = false", err)
			}
			if !x.IsZero() || x.Type() != TypeInvalid {
				t.Errorf("Parse(%q) returned non-zero Xname %q on error", tc.in, x)
			}
			if Valid(tc.in) || TypeOf(tc.in) != TypeInvalid || Parent(tc.in) != "" {
				t.Errorf("Valid/TypeOf/Parent(%q) = %v/%s/%q, want false/INVALID/\"\"",
					tc.in, Valid(tc.in), TypeOf(tc.in), Parent(tc.in))
			}
		})
	}
}

func TestNormalization(t *testing.T) {
	tests := []struct {
		in   string
		want string
		typ  Type
	}{
		{in: "x0003000c0", want: "x3000c0", typ: Chassis},
		{in: "X3000C0S7B0N1", want: "x3000c0s7b0n1", typ: Node},
		{in: "  x3000c0s07b00n001\n", want: "x3000c0s7b0n1", typ: Node},
		{in: "x00000c0", want: "x0c0", typ: Chassis},
		{in: "x1000c1s7b1n0v010", want: "x1000c1s7b1n0v10", typ: VirtualNode},
		{in: "x1000c0100", want: "", typ: TypeInvalid}, // chassis 100, not 1
		{in: "x00012345", want: "", typ: TypeInvalid},  // five significant digits
		{in: "x0c0w01", want: "x0c0w1", typ: MgmtSwitch},
		{in: "x0c0w00", want: "", typ: TypeInvalid}, // still switch 0
		{in: "S00", want: "s0", typ: System},
		{in: "SMS007", want: "sms7", typ: SMSBox},
		{in: "P01.010", want: "p1.10", typ: Partition},
		{in: "ALL", want: "all", typ: TypeAll},
		{in: "All_Svc", want: "all_svc", typ: TypeAllSvc},
		{in: "D01W002", want: "d1w2", typ: CDUMgmtSwitch},
		{in: "x1c0s0J01", want: "x1c0s0j1", typ: NodePowerConnector},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			x, err := Parse(tc.in)
			if (err == nil) != (tc.want != "") {
				t.Fatalf("Parse(%q) error = %v, want valid = %v", tc.in, err, tc.want != "")
			}
			if x.String() != tc.want || x.Type() != tc.typ || TypeOf(tc.in) != tc.typ {
				t.Errorf("Parse(%q) = %q (%s), want %q (%s)", tc.in, x, x.Type(), tc.want, tc.typ)
			}
			if tc.want != "" && Normalize(tc.in) != tc.want {
				t.Errorf("Normalize(%q) = %q, want %q", tc.in, Normalize(tc.in), tc.want)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{in: "", want: ""},
		{in: "x3000c0", want: "x3000c0"},
		{in: " X03000C00S000 ", want: "x3000c0s0"},
		{in: "Foo007Bar0", want: "foo7bar0"},
		{in: "007", want: "7"},
		{in: "000", want: "0"},
		{in: "a100b", want: "a100b"},
		{in: "x1-007.0010", want: "x1-7.10"},
		{in: "ÉX01", want: "Éx1"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			if got := Normalize(tc.in); got != tc.want {
				t.Errorf("Normalize(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestParentChain(t *testing.T) {
	x := MustParse("x1000c1s7b1n0g2k5")
	var got []string
	for ok := true; ok; x, ok = x.Parent() {
		got = append(got, x.String()+" "+x.Type().String())
	}
	want := []string{
		"x1000c1s7b1n0g2k5 Drive", "x1000c1s7b1n0g2 StorageGroup", "x1000c1s7b1n0 Node",
		"x1000c1s7b1 NodeBMC", "x1000c1s7 ComputeModule", "x1000c1 Chassis", "x1000 Cabinet", "s0 System",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parent chain mismatch (-want +got):\n%s", diff)
	}
	if p, ok := (Xname{}).Parent(); ok || !p.IsZero() {
		t.Errorf("zero Xname Parent() = %q, %v; want zero, false", p, ok)
	}
	// Xnames compare with ==, so a parent must equal the parsed parent.
	if p, _ := MustParse("X1000C1S7B1N0").Parent(); p != MustParse("x1000c1s7b1") {
		t.Errorf("Parent() = %#v, want %#v", p, MustParse("x1000c1s7b1"))
	}
}

func TestText(t *testing.T) {
	type doc struct {
		ID Xname `json:"ID"`
	}
	var d doc
	if err := json.Unmarshal([]byte(`{"ID":"X3000C0S07B0N01"}`), &d); err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	if got, want := string(b), `{"ID":"x3000c0s7b0n1"}`; got != want {
		t.Errorf("round trip = %s, want %s", got, want)
	}
	err = json.Unmarshal([]byte(`{"ID":"x3000c9"}`), &d)
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("Unmarshal of bad xname: error %v does not wrap ErrInvalid", err)
	}
}

func TestMustParsePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("MustParse(\"bogus\") did not panic")
		}
	}()
	MustParse("bogus")
}

func TestAllocations(t *testing.T) {
	tests := []struct {
		name string
		f    func()
		want float64
	}{
		{name: "Parse normalised", f: func() { _, _ = Parse("x3000c0s7b0n1") }, want: 0},
		{name: "Parse upper case", f: func() { _, _ = Parse("X3000C0S7B0N1") }, want: 1},
		{name: "Valid upper case", f: func() { Valid("X3000C0S7B0N01") }, want: 0},
		{name: "TypeOf invalid", f: func() { TypeOf("x3000c9") }, want: 0},
		{name: "Xname.Parent", f: func() { MustParse("x3000c0s7b0n1").Parent() }, want: 0},
		{name: "Normalize normalised", f: func() { Normalize(" x3000c0 ") }, want: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := testing.AllocsPerRun(100, tc.f); got != tc.want {
				t.Errorf("allocations = %v, want %v", got, tc.want)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, tc := range validCases {
		f.Add(tc.in)
	}
	for _, s := range []string{"", " X0003000C0S07B0N01 ", "x1c9", "x99999999999999999999", "p1.", "sms", "ALL_COMP", "x1c0é", "d0w0", "x1c0s0j01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		x, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrInvalid) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Parse(%q) error %q: not a one-line ErrInvalid", s, err)
			}
			if Valid(s) || TypeOf(s) != TypeInvalid {
				t.Fatalf("Parse(%q) failed but Valid/TypeOf accept it", s)
			}
			return
		}
		if !Valid(s) || TypeOf(s) != x.Type() || x.Type() == TypeInvalid {
			t.Fatalf("Parse(%q) = %q (%s) but Valid/TypeOf = %v/%s", s, x, x.Type(), Valid(s), TypeOf(s))
		}
		if n := Normalize(s); n != x.String() {
			t.Fatalf("Parse(%q) = %q, Normalize = %q", s, x, n)
		}
		y, err := Parse(x.String())
		if err != nil || y != x {
			t.Fatalf("Parse(%q) = %#v, %v; want %#v", x, y, err, x)
		}
		p, ok := x.Parent()
		if ps := Parent(s); ps != p.String() || ok != (ps != "") {
			t.Fatalf("Parent(%q) = %q, Xname.Parent = %q, %v", s, ps, p, ok)
		}
		if !ok {
			if x.Type().Parent() != TypeInvalid {
				t.Fatalf("%q (%s) has no parent but its type has parent %s", x, x.Type(), x.Type().Parent())
			}
			return
		}
		q, err := Parse(p.String())
		if err != nil || q != p || q.Type() != x.Type().Parent() {
			t.Fatalf("parent of %q (%s) is %#v; Parse gives %#v, %v; want type %s", x, x.Type(), p, q, err, x.Type().Parent())
		}
	})
}

func BenchmarkParse(b *testing.B) {
	for _, s := range []string{"x3000c0s7b0n1", "X3000C0S07B0N01", "x1000c1s7b1n0g2k5", "s0", "x3000c9"} {
		b.Run(s, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = Parse(s)
			}
		})
	}
}
