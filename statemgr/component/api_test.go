package component_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
)

func TestComponentFilters(t *testing.T) { pg.EachDB(t, testComponentFilters) }

func testComponentFilters(t *testing.T, db testpeer.DB) {
	a := hsmtest.NewServerOn(t, db)
	hsmtest.Seed(t, a)
	tests := []struct {
		name, query string
		want        []string
	}{
		{name: "all", query: "", want: []string{"x0c0s0b0", "x0c0s0b0n0", "x0c0s0b0n1", "x0c0s1b0n0", "x0c0s1b0n1"}},
		{name: "type case-insensitive", query: "?type=node", want: []string{"x0c0s0b0n0", "x0c0s0b0n1", "x0c0s1b0n0", "x0c0s1b0n1"}},
		{name: "type and state", query: "?type=Node&state=READY", want: []string{"x0c0s0b0n0", "x0c0s1b0n1"}},
		{name: "repeated state ORs", query: "?state=Off&state=On", want: []string{"x0c0s0b0n1", "x0c0s1b0n0"}},
		{name: "negation", query: "?type=Node&state=!Ready", want: []string{"x0c0s0b0n1", "x0c0s1b0n0"}},
		{name: "two negations", query: "?type=Node&state=!Ready&state=!off", want: []string{"x0c0s1b0n0"}},
		{name: "id", query: "?id=x0c0s0b0n1&id=X0C0S1B0N0", want: []string{"x0c0s0b0n1", "x0c0s1b0n0"}},
		{name: "flag alias", query: "?flag=warn", want: []string{"x0c0s1b0n1"}},
		{name: "role and subrole", query: "?role=service&subrole=Master", want: []string{"x0c0s1b0n0"}},
		{name: "enabled", query: "?enabled=false", want: []string{"x0c0s1b0n1"}},
		{name: "softwarestatus folds case", query: "?softwarestatus=admindown", want: []string{"x0c0s1b0n0"}},
		{name: "arch and class", query: "?arch=x86&class=river", want: []string{"x0c0s0b0n0"}},
		{name: "nid", query: "?nid=2&nid=4", want: []string{"x0c0s0b0n1", "x0c0s1b0n1"}},
		{name: "nid range", query: "?nid_start=2&nid_end=3", want: []string{"x0c0s0b0n1", "x0c0s1b0n0"}},
		{name: "no match is empty", query: "?state=Halt", want: []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, hsmtest.IDsOf(a.List(tc.query))); diff != "" {
				t.Errorf("GET %s (-want +got):\n%s", tc.query, diff)
			}
		})
	}
}

func TestComponentProjectionsAndWire(t *testing.T) { pg.EachDB(t, testComponentProjectionsAndWire) }

func testComponentProjectionsAndWire(t *testing.T, db testpeer.DB) {
	a := hsmtest.NewServerOn(t, db)
	hsmtest.Seed(t, a)
	tests := []struct{ query, want string }{
		{query: "?id=x0c0s1b0n1", want: `{"Components":[{"ID":"x0c0s1b0n1","Type":"Node","State":"Ready","Flag":"Warning","Enabled":false,"Role":"Compute","NID":4}]}`},
		{query: "?id=x0c0s1b0n1&stateonly=true", want: `{"Components":[{"ID":"x0c0s1b0n1","Type":"Node","State":"Ready","Flag":"Warning"}]}`},
		{query: "?id=x0c0s1b0n1&flagonly=true", want: `{"Components":[{"ID":"x0c0s1b0n1","Type":"Node","Flag":"Warning"}]}`},
		{query: "?id=x0c0s1b0n0&roleonly=true", want: `{"Components":[{"ID":"x0c0s1b0n0","Type":"Node","Role":"Service","SubRole":"Master"}]}`},
		{query: "?id=x0c0s1b0n0&nidonly=true", want: `{"Components":[{"ID":"x0c0s1b0n0","Type":"Node","NID":3}]}`},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			got := strings.TrimSpace(string(a.Must(200, "GET", "/State/Components"+tc.query, nil)))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// The hand-written encoder and encoding/json agree on the full component.
	var one hsm.Component
	if err := json.Unmarshal(a.Must(200, "GET", "/State/Components/x0c0s0b0n0", nil), &one); err != nil {
		t.Fatal(err)
	}
	want := hsm.Component{ID: "x0c0s0b0n0", Type: "Node", State: "Ready", Flag: "OK", Enabled: ptr(true), Role: "Compute", NID: ptr(1), Arch: "X86", Class: "River"}
	if diff := cmp.Diff(want, one); diff != "" {
		t.Errorf("GET one (-want +got):\n%s", diff)
	}
}

func TestComponentLookups(t *testing.T) { pg.EachDB(t, testComponentLookups) }

func testComponentLookups(t *testing.T, db testpeer.DB) {
	a := hsmtest.NewServerOn(t, db)
	hsmtest.Seed(t, a)
	var c hsm.Component
	json.Unmarshal(a.Must(200, "GET", "/State/Components/ByNID/3", nil), &c)
	if c.ID != "x0c0s1b0n0" {
		t.Errorf("ByNID/3 = %s, want x0c0s1b0n0", c.ID)
	}
	a.Must(404, "GET", "/State/Components/ByNID/99", nil)
	a.Must(404, "GET", "/State/Components/x9c0s0b0n0", nil)
	a.Must(400, "GET", "/State/Components/notanxname", nil)

	var l hsm.ComponentList
	json.Unmarshal(a.Must(200, "POST", "/State/Components/Query", map[string]any{
		"ComponentIDs": []string{"x0c0s0b0n0", "x0c0s0b0n1", "x0c0s1b0n0"}, "state": []string{"!ready"}, "stateonly": true}), &l)
	if diff := cmp.Diff([]hsm.Component{{ID: "x0c0s0b0n1", Type: "Node", State: "Off", Flag: "OK"}, {ID: "x0c0s1b0n0", Type: "Node", State: "On", Flag: "OK"}}, l.Components); diff != "" {
		t.Errorf("POST Query (-want +got):\n%s", diff)
	}
	l = hsm.ComponentList{}
	json.Unmarshal(a.Must(200, "POST", "/State/Components/ByNID/Query", map[string]any{"NIDRanges": []string{"1-2", "4"}, "nidonly": true}), &l)
	if diff := cmp.Diff([]string{"x0c0s0b0n0", "x0c0s0b0n1", "x0c0s1b0n1"}, hsmtest.IDsOf(l.Components)); diff != "" {
		t.Errorf("ByNID/Query (-want +got):\n%s", diff)
	}
	a.Must(400, "POST", "/State/Components/ByNID/Query", map[string]any{"NIDRanges": []string{"4-1"}})
	if diff := cmp.Diff([]string{"x0c0s0b0", "x0c0s0b0n0", "x0c0s0b0n1"}, hsmtest.IDsOf(listPath(t, a, "/State/Components/Query/x0c0s0b0"))); diff != "" {
		t.Errorf("Query/x0c0s0b0 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"x0c0s0b0n1"}, hsmtest.IDsOf(listPath(t, a, "/State/Components/Query/x0c0s0?state=Off"))); diff != "" {
		t.Errorf("Query/x0c0s0?state=Off (-want +got):\n%s", diff)
	}
}

func listPath(t *testing.T, a *hsmtest.Server, path string) []hsm.Component {
	t.Helper()
	var l hsm.ComponentList
	if err := json.Unmarshal(a.Must(200, "GET", path, nil), &l); err != nil {
		t.Fatal(err)
	}
	return l.Components
}

func TestComponentBadInput(t *testing.T) { pg.EachDB(t, testComponentBadInput) }

func testComponentBadInput(t *testing.T, db testpeer.DB) {
	a := hsmtest.NewServerOn(t, db)
	hsmtest.Seed(t, a)
	big := `{"ComponentIDs":["` + strings.Repeat("x", 9<<20) + `"],"State":"On"}`
	tests := []struct {
		name, method, path string
		body               any
		status             int
		detail             string
	}{
		{name: "bad enum filter", method: "GET", path: "/State/Components?state=Sleepy", status: 400, detail: "bad query param: Argument was not a valid HMS State"},
		{name: "bad nid filter", method: "GET", path: "/State/Components?nid=one", status: 400, detail: "bad query param: a required argument was not an integer"},
		{name: "malformed json", method: "PATCH", path: "/State/Components/BulkStateData", body: `{"ComponentIDs":[`, status: 400, detail: "JSON"},
		{name: "bad state", method: "PATCH", path: "/State/Components/x0c0s0b0n0/StateData", body: map[string]any{"State": "Sleepy"}, status: 400, detail: "State"},
		{name: "missing state", method: "PATCH", path: "/State/Components/x0c0s0b0n0/StateData", body: map[string]any{"Flag": "OK"}, status: 400, detail: "State"},
		{name: "bad flag", method: "PATCH", path: "/State/Components/BulkFlagOnly", body: map[string]any{"ComponentIDs": []string{"x0c0s0b0n0"}, "Flag": "Purple"}, status: 400, detail: "Flag"},
		{name: "bad role", method: "PATCH", path: "/State/Components/x0c0s0b0n0/Role", body: map[string]any{"Role": "Chef"}, status: 400, detail: "Role"},
		{name: "unknown xname single", method: "PATCH", path: "/State/Components/x5c0s0b0n0/StateData", body: map[string]any{"State": "On"}, status: 404, detail: "x5c0s0b0n0"},
		{name: "unknown xname bulk", method: "PATCH", path: "/State/Components/BulkStateData", body: map[string]any{"ComponentIDs": []string{"x0c0s0b0n1", "x5c0s0b0n0"}, "State": "On"}, status: 404, detail: "x5c0s0b0n0"},
		{name: "invalid xname bulk", method: "PATCH", path: "/State/Components/BulkEnabled", body: map[string]any{"ComponentIDs": []string{"x0c0s0b0n1", "bogus"}, "Enabled": false}, status: 400, detail: "ComponentIDs[1]"},
		{name: "nid collision", method: "PATCH", path: "/State/Components/x0c0s0b0n0/NID", body: map[string]any{"NID": 2}, status: 409, detail: "NID"},
		{name: "bulk nid collision", method: "PATCH", path: "/State/Components/BulkNID", body: map[string]any{"Components": []map[string]any{{"ID": "x0c0s0b0n0", "NID": 7}, {"ID": "x0c0s0b0n1", "NID": 7}}}, status: 409, detail: "Components[1].NID"},
		{name: "post nid collision", method: "POST", path: "/State/Components", body: map[string]any{"Components": []map[string]any{{"ID": "x1c0s0b0n0", "State": "On", "NID": 3}}}, status: 409, detail: "Components[0].NID"},
		{name: "post bad enum names index", method: "POST", path: "/State/Components", body: map[string]any{"Components": []map[string]any{{"ID": "x1c0s0b0n0", "State": "On"}, {"ID": "x1c0s0b0n1", "State": "On", "Arch": "Z80"}}}, status: 400, detail: "Components[1].Arch"},
		{name: "post type mismatch", method: "POST", path: "/State/Components", body: map[string]any{"Components": []map[string]any{{"ID": "x1c0s0b0n0", "Type": "NodeBMC", "State": "On"}}}, status: 400, detail: "Components[0].Type"},
		{name: "oversized body", method: "PATCH", path: "/State/Components/x0c0s0b0n0/StateData", body: big, status: 413, detail: "bytes"},
	}
	before := a.List("")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, body := a.Do(tc.method, tc.path, tc.body)
			if got != tc.status {
				t.Fatalf("status %d, want %d; body %s", got, tc.status, body)
			}
			var p struct {
				Detail string `json:"detail"`
				Status int    `json:"status"`
			}
			if err := json.Unmarshal(body, &p); err != nil || p.Status != tc.status || !strings.Contains(p.Detail, tc.detail) {
				t.Errorf("problem %s does not name %q", body, tc.detail)
			}
		})
	}
	if diff := cmp.Diff(before, a.List("")); diff != "" {
		t.Errorf("bad requests changed components (-before +after):\n%s", diff)
	}
}
