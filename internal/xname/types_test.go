package xname

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGrammar(t *testing.T) {
	type edge struct {
		parent kind
		letter byte
	}
	seen := map[edge]kind{}
	for k := kCDU; k < numKinds; k++ {
		n := grammar[k]
		if n.typ == "" || n.typ == TypeInvalid {
			t.Errorf("kind %d has no type", k)
		}
		if n.parent == kInvalid {
			continue
		}
		for _, c := range []byte{n.letter, n.alt} {
			if c == 0 {
				continue
			}
			if prev, dup := seen[edge{n.parent, c}]; dup {
				t.Errorf("%s and %s both follow %s with %q", grammar[prev].typ, n.typ, grammar[n.parent].typ, c)
			}
			seen[edge{n.parent, c}] = k
		}
		depth := 0
		for p := k; p != kSystem; p = grammar[p].parent {
			depth++
		}
		if depth > maxDepth {
			t.Errorf("%s is %d levels deep, more than maxDepth", n.typ, depth)
		}
	}
}

func TestTypes(t *testing.T) {
	ts := Types()
	if len(ts) != int(numKinds)-1 || ts[0] != CDU || ts[len(ts)-1] != TypeAllSvc {
		t.Errorf("Types() = %v", ts)
	}
	seen := map[Type]bool{}
	for _, typ := range ts {
		if seen[typ] {
			t.Errorf("Types() lists %s twice", typ)
		}
		seen[typ] = true
	}
	ts[0] = "changed"
	if Types()[0] != CDU {
		t.Error("Types() shares its slice with the caller")
	}
}

func TestTypeParentAndChildren(t *testing.T) {
	tests := []struct {
		typ      Type
		parent   Type
		children []Type
	}{
		{typ: System, parent: TypeInvalid, children: []Type{CDU, Cabinet}},
		{typ: SMSBox, parent: TypeInvalid},
		{typ: Partition, parent: TypeInvalid},
		{typ: TypeAll, parent: TypeInvalid},
		{typ: TypeInvalid, parent: TypeInvalid},
		{typ: "Bogus", parent: TypeInvalid},
		{typ: CDU, parent: System, children: []Type{CDUMgmtSwitch}},
		{typ: Cabinet, parent: System, children: []Type{CabinetCDU, CabinetBMC, CabinetPDUController, Chassis, CEC}},
		{typ: CabinetPDUController, parent: Cabinet, children: []Type{CabinetPDU, CabinetPDUNic}},
		{typ: CabinetPDU, parent: CabinetPDUController, children: []Type{CabinetPDUOutlet, CabinetPDUPowerConnector}},
		{typ: Chassis, parent: Cabinet, children: []Type{
			ChassisBMC, CMMRectifier, CMMFpga, ComputeModule, RouterModule, MgmtSwitch, MgmtHLSwitchEnclosure,
		}},
		{typ: ComputeModule, parent: Chassis, children: []Type{NodeBMC, NodeEnclosure, NodePowerConnector}},
		{typ: NodeBMC, parent: ComputeModule, children: []Type{NodeBMCNic, Node, NodeFpga}},
		{typ: Node, parent: NodeBMC, children: []Type{
			VirtualNode, Processor, StorageGroup, NodeNic, NodeHsnNic, Memory, NodeAccel, NodeAccelRiser,
		}},
		{typ: NodeFpga, parent: NodeBMC},
		{typ: RouterModule, parent: Chassis, children: []Type{
			HSNAsic, RouterFpga, RouterTOR, RouterBMC, RouterPowerConnector, HSNBoard, HSNConnector,
		}},
		{typ: MgmtSwitch, parent: Chassis, children: []Type{MgmtSwitchConnector}},
		{typ: Drive, parent: StorageGroup},
	}
	for _, tc := range tests {
		t.Run(string(tc.typ), func(t *testing.T) {
			if got := tc.typ.Parent(); got != tc.parent {
				t.Errorf("%s.Parent() = %s, want %s", tc.typ, got, tc.parent)
			}
			if diff := cmp.Diff(tc.children, ChildTypes(tc.typ)); diff != "" {
				t.Errorf("ChildTypes(%s) mismatch (-want +got):\n%s", tc.typ, diff)
			}
		})
	}
}

func TestClassification(t *testing.T) {
	var controllers, containers []Type
	for _, typ := range Types() {
		if IsController(typ) {
			controllers = append(controllers, typ)
		}
		if IsContainer(typ) {
			containers = append(containers, typ)
		}
	}
	tests := []struct {
		name string
		got  []Type
		want []Type
	}{
		{name: "controllers", got: controllers, want: []Type{CabinetPDUController, ChassisBMC, NodeBMC, RouterBMC}},
		{name: "containers", got: containers, want: []Type{Cabinet, Chassis, ComputeModule, RouterModule, NodeEnclosure, HSNBoard}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
	if IsController(TypeInvalid) || IsContainer("bogus") {
		t.Error("unknown types classified")
	}
	if !IsNode(" X1C0S0B0N0 ") || IsNode("x1c0s0b0") || IsNode("junk") {
		t.Error("IsNode is wrong")
	}
}

func TestParseType(t *testing.T) {
	tests := []struct {
		in   string
		want Type
		ok   bool
	}{
		{in: "Node", want: Node, ok: true},
		{in: "node", want: Node, ok: true},
		{in: "NodeNIC", want: NodeNic, ok: true},
		{in: "nodehsnnic", want: NodeHsnNic, ok: true},
		{in: "ALLCOMP", want: TypeAllComp, ok: true},
		{in: "partition", want: Partition, ok: true},
		{in: "INVALID", want: TypeInvalid},
		{in: "", want: TypeInvalid},
		{in: "Nodes", want: TypeInvalid},
		{in: "comptype_node", want: TypeInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, ok := ParseType(tc.in)
			if got != tc.want || ok != tc.ok {
				t.Errorf("ParseType(%q) = %s, %v; want %s, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestSLSTypes(t *testing.T) {
	for _, typ := range Types() {
		sls := typ.SLSType()
		if sls == "" {
			continue
		}
		t.Run(sls, func(t *testing.T) {
			if got, ok := FromSLSType(sls); !ok || got != typ {
				t.Errorf("FromSLSType(%q) = %s, %v; want %s, true", sls, got, ok, typ)
			}
		})
	}
	for _, s := range []string{"", "comptype_bogus", "Node", "COMPTYPE_NODE"} {
		if got, ok := FromSLSType(s); ok || got != TypeInvalid {
			t.Errorf("FromSLSType(%q) = %s, %v; want INVALID, false", s, got, ok)
		}
	}
	if got := TypeInvalid.SLSType(); got != "" {
		t.Errorf("TypeInvalid.SLSType() = %q", got)
	}
}
