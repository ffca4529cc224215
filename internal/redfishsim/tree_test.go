package redfishsim

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// odataIDs collects every "@odata.id" string anywhere in v.
func odataIDs(v any, out *[]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "@odata.id" {
				*out = append(*out, s)
			}
			odataIDs(e, out)
		}
	case []any:
		for _, e := range x {
			odataIDs(e, out)
		}
	}
}

// walk follows every @odata.id reachable from the service root and returns
// the canonical paths that answered 200 JSON and those the tree lacks.
func walk(t *testing.T, tree *Tree, cfg Config) (served, absent []string) {
	t.Helper()
	cfg.Tree = tree
	_, srv := startBMC(t, cfg)
	seen := map[string]bool{Root: true}
	queue := []string{Root + "/"}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		resp, body := do(t, srv, req{method: "GET", path: p, user: testUser, pass: testPass})
		canon := Canonical(p)
		if !tree.Has(canon) && !strings.HasPrefix(canon, sessionsPath) {
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("GET %s (not in the tree): %d, want 404", p, resp.StatusCode)
			}
			absent = append(absent, canon)
			continue
		}
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Errorf("GET %s: %d %s", p, resp.StatusCode, resp.Header.Get("Content-Type"))
			continue
		}
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			t.Errorf("GET %s: %v", p, err)
			continue
		}
		served = append(served, canon)
		var ids []string
		odataIDs(v, &ids)
		for _, id := range ids {
			if c := Canonical(id); !seen[c] && strings.HasPrefix(c, Root) {
				seen[c] = true
				queue = append(queue, id)
			}
		}
	}
	return served, absent
}

func TestMockupWalk(t *testing.T) {
	tests := []struct {
		name        string
		mockup      string
		mustServe   []string
		wantSystems []string
	}{
		{name: "rackmount1", mockup: "public-rackmount1",
			mustServe: []string{
				"/redfish/v1/Systems/437XR1138R2", "/redfish/v1/Systems/437XR1138R2/EthernetInterfaces/12446A3B0411",
				"/redfish/v1/Managers/BMC/NetworkProtocol", "/redfish/v1/Chassis/1U", "/redfish/v1/AccountService/Accounts/1",
			},
			wantSystems: []string{"/redfish/v1/Systems/437XR1138R2"}},
		{name: "bladed", mockup: "public-bladed",
			mustServe:   []string{"/redfish/v1/Managers/MultiBladeBMC", "/redfish/v1/Systems/529QB9453R6"},
			wantSystems: []string{"/redfish/v1/Systems/529QB9450R6", "/redfish/v1/Systems/529QB9451R6", "/redfish/v1/Systems/529QB9452R6", "/redfish/v1/Systems/529QB9453R6"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tree := mockup(t, tt.mockup)
			served, absent := walk(t, tree, Config{})
			for _, p := range tt.mustServe {
				if !slices.Contains(served, p) {
					t.Errorf("walk did not reach %s", p)
				}
			}
			if len(served) < 50 {
				t.Errorf("walk served only %d resources", len(served))
			}
			t.Logf("%s: %d resources served, %d links the mockup does not contain", tt.mockup, len(served), len(absent))
			_, srv := startBMC(t, Config{Tree: tree})
			var got []string
			odataIDs(get(t, srv, "/redfish/v1/Systems")["Members"], &got)
			if diff := cmp.Diff(tt.wantSystems, got); diff != "" {
				t.Errorf("Systems members (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMockupValues(t *testing.T) {
	_, srv := startBMC(t, Config{Tree: mockup(t, "public-rackmount1"), User: "Administrator", Password: "pw"})
	sys := getAs(t, srv, "/redfish/v1/Systems/437XR1138R2", "Administrator", "pw")
	reset := sys["Actions"].(map[string]any)["#ComputerSystem.Reset"].(map[string]any)
	if sys["PowerState"] != "On" || reset["target"] != "/redfish/v1/Systems/437XR1138R2/Actions/ComputerSystem.Reset" {
		t.Fatalf("system: PowerState %v, reset %v", sys["PowerState"], reset)
	}
	resp, body := do(t, srv, req{method: "GET", path: "/redfish/v1/Systems", user: "Administrator", pass: "pw"})
	if resp.StatusCode != 200 {
		t.Fatalf("the mockup's own Administrator account does not log in: %d %s", resp.StatusCode, body)
	}
	resp, body = do(t, srv, req{method: "GET", path: "/redfish/v1/$metadata"})
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/xml" || !strings.HasPrefix(string(body), "<?xml") {
		t.Errorf("$metadata: %d %s %.40q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	if resp, _ := do(t, srv, req{method: "GET", path: "/redfish/v1/Registries/Base.1.5.0.json", user: "Administrator", pass: "pw"}); resp.StatusCode != 200 {
		t.Errorf("registry file: %d", resp.StatusCode)
	}
}

func TestLoadMockupErrors(t *testing.T) {
	if _, err := LoadMockup(t.TempDir()); err == nil {
		t.Error("an empty directory loaded")
	}
	if _, err := LoadMockup("testdata/does-not-exist"); err == nil {
		t.Error("a missing directory loaded")
	}
}

func TestGeneratedWalk(t *testing.T) {
	served, absent := walk(t, Generate("x3000c0s7b0", 2), Config{Xname: "x3000c0s7b0"})
	if len(absent) != 0 {
		t.Errorf("generated tree links to resources it lacks: %v", absent)
	}
	// root; Session and AccountService with their collections and account 1;
	// Managers, BMC, its NIC collection and NIC, NetworkProtocol; Chassis and
	// Enclosure; Systems; per system: itself, 3 collections, 2 CPUs, 4 DIMMs, 2 NICs.
	if want := 1 + 5 + 5 + 2 + 1 + 2*12; len(served) != want {
		t.Errorf("served %d resources, want %d: %v", len(served), want, served)
	}
}

var macPattern = regexp.MustCompile(`^[0-9a-f]{2}(:[0-9a-f]{2}){5}$`)

func TestGeneratedMACsAreDeterministic(t *testing.T) {
	macs := func(xname string) []string {
		tree := Generate(xname, 3)
		var out []string
		for _, p := range tree.Paths() {
			if !strings.Contains(p, "/EthernetInterfaces/") {
				continue
			}
			var nic struct{ MACAddress string }
			if err := json.Unmarshal(tree.res[p].body, &nic); err != nil {
				t.Fatal(err)
			}
			out = append(out, nic.MACAddress)
		}
		return out
	}
	a, again, other := macs("x3000c0s1b0"), macs("x3000c0s1b0"), macs("x3000c0s2b0")
	if diff := cmp.Diff(a, again); diff != "" {
		t.Errorf("same xname, different MACs (-first +second):\n%s", diff)
	}
	if len(a) != 1+3*nicsPerSystem {
		t.Fatalf("%d MACs, want %d", len(a), 1+3*nicsPerSystem)
	}
	seen := map[string]bool{}
	for i, m := range append(slices.Clone(a), other...) {
		if !macPattern.MatchString(m) {
			t.Errorf("MAC %q is malformed", m)
		}
		first := m[:2]
		var b byte
		_, _ = fmtSscanHex(first, &b)
		if b&0x02 == 0 || b&0x01 != 0 {
			t.Errorf("MAC %s is not locally administered unicast", m)
		}
		if seen[m] {
			t.Errorf("MAC %s (#%d) repeats", m, i)
		}
		seen[m] = true
	}
	if got := MAC("x3000c0s1b0", "s0:eth0"); !slices.Contains(a, got) {
		t.Errorf("MAC() = %s is not among the served MACs %v", got, a)
	}
}

func TestTemplateServedPerXname(t *testing.T) {
	tpl := Template(1)
	_, s1 := startBMC(t, Config{Xname: "x3000c0s1b0", Tree: tpl})
	_, s2 := startBMC(t, Config{Xname: "x3000c0s2b0", Tree: tpl})
	const nic = "/redfish/v1/Systems/Node0/EthernetInterfaces/eth0"
	if got, want := get(t, s1, nic)["MACAddress"], MAC("x3000c0s1b0", "s0:eth0"); got != want {
		t.Errorf("BMC 1 MAC = %v, want %v", got, want)
	}
	if got, want := get(t, s2, nic)["MACAddress"], MAC("x3000c0s2b0", "s0:eth0"); got != want {
		t.Errorf("BMC 2 MAC = %v, want %v", got, want)
	}
	if got := get(t, s2, "/redfish/v1/Managers/BMC/NetworkProtocol")["HostName"]; got != "x3000c0s2b0" {
		t.Errorf("HostName = %v", got)
	}
	// Config.MACs replaces the MACs it names, not the others.
	_, s3 := startBMC(t, Config{Xname: "x1000c0s0b0", Tree: tpl, MACs: map[string]string{"bmc:eth0": "02:03:e8:00:30:00"}})
	if got := get(t, s3, "/redfish/v1/Managers/BMC/EthernetInterfaces/eth0")["MACAddress"]; got != "02:03:e8:00:30:00" {
		t.Errorf("BMC MAC given in Config.MACs served as %v", got)
	}
	if got, want := get(t, s3, nic)["MACAddress"], MAC("x1000c0s0b0", "s0:eth0"); got != want {
		t.Errorf("node MAC = %v, want %v (derived)", got, want)
	}
}
