package statemgr

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/statemgr/hsm"
)

func TestNodeMapsAndDefaults(t *testing.T) {
	sls := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/hardware/x0c0s0b0n1":
			w.Write([]byte(`{"Xname":"x0c0s0b0n1","Type":"comptype_node","ExtraProperties":{"NID":20,"Role":"Application","SubRole":"UAN"}}`))
		case "/v1/hardware/x0c0s0b0n2":
			w.Write([]byte(`{"Xname":"x0c0s0b0n2","ExtraProperties":{"NID":30,"Role":"Management","SubRole":"worker"}}`))
		case "/v1/hardware/x0c0s0b0n3":
			w.WriteHeader(http.StatusInternalServerError)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer sls.Close()
	a := newAPIServerWith(t, StoreConfig{Layout: NewSLS(sls.URL, sls.Client())})

	a.must(200, "POST", "/Defaults/NodeMaps", map[string]any{"NodeMaps": []map[string]any{
		{"ID": "x0c0s0b0n0", "NID": 10, "Role": "compute"}, {"ID": "x0c0s0b0n1", "NID": 11}}})
	a.must(409, "POST", "/Defaults/NodeMaps", map[string]any{"NodeMaps": []map[string]any{{"ID": "x0c0s0b0n5", "NID": 10}}})
	a.must(400, "POST", "/Defaults/NodeMaps", map[string]any{"NodeMaps": []map[string]any{{"ID": "x0c0s0b0", "NID": 12}}})
	a.must(400, "POST", "/Defaults/NodeMaps", map[string]any{"NodeMaps": []map[string]any{{"ID": "x0c0s0b0n6", "NID": 0}}})
	var m hsm.NodeMap
	json.Unmarshal(a.must(200, "GET", "/Defaults/NodeMaps/x0c0s0b0n0", nil), &m)
	if diff := cmp.Diff(hsm.NodeMap{ID: "x0c0s0b0n0", NID: 10, Role: "Compute"}, m); diff != "" {
		t.Errorf("GET NodeMap (-want +got):\n%s", diff)
	}
	a.must(200, "PUT", "/Defaults/NodeMaps/x0c0s0b0n4", map[string]any{"NID": 14})
	a.exact(200, "DELETE", "/Defaults/NodeMaps/x0c0s0b0n4", nil, `{"code":0,"message":"deleted 1 entry"}`+"\n")
	a.exact(200, "PUT", "/Defaults/NodeMaps/x0c0s0b0n4v1", map[string]any{"NID": 15}, `{"ID":"x0c0s0b0n4v1","NID":15}`+"\n") // VirtualNodes too, as shipped
	a.must(200, "DELETE", "/Defaults/NodeMaps/x0c0s0b0n4v1", nil)
	a.must(404, "GET", "/Defaults/NodeMaps/x0c0s0b0n4", nil)

	a.must(204, "POST", "/State/Components", map[string]any{"Components": []map[string]any{
		{"ID": "x0c0s0b0n0", "State": "On"},                               // NodeMap: NID and Role
		{"ID": "x0c0s0b0n1", "State": "On"},                               // NodeMap NID, SLS Role
		{"ID": "x0c0s0b0n2", "State": "On"},                               // SLS only
		{"ID": "x0c0s0b0n3", "State": "On"},                               // SLS failing: created without defaults
		{"ID": "x0c0s0b0n7", "State": "On", "NID": 70, "Role": "Service"}, // given values win
		{"ID": "x0c0s0b0", "State": "On"},                                 // not a node
	}})
	want := []hsm.Component{
		{ID: "x0c0s0b0", Type: "NodeBMC"},
		{ID: "x0c0s0b0n0", Type: "Node", Role: "Compute", NID: ptr(10)},
		{ID: "x0c0s0b0n1", Type: "Node", Role: "Application", SubRole: "UAN", NID: ptr(11)}, // UAN: CSM's default vocabulary
		{ID: "x0c0s0b0n2", Type: "Node", Role: "Management", SubRole: "Worker", NID: ptr(30)},
		{ID: "x0c0s0b0n3", Type: "Node"},
		{ID: "x0c0s0b0n7", Type: "Node", Role: "Service", NID: ptr(70)},
	}
	got := a.list("?roleonly=true")
	nids := a.list("?nidonly=true")
	for i := range got {
		got[i].NID = nids[i].NID
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
}

func TestServiceEndpoints(t *testing.T) {
	a := newAPIServer(t)
	if got := a.must(200, "GET", "/service/ready", nil); !strings.Contains(string(got), `{"code":0,"message":"HSM is healthy"}`) {
		t.Errorf("/service/ready body %s, want the HSM {code, message} body", got)
	}
	a.must(204, "GET", "/service/liveness", nil)
	var v hsm.Values
	json.Unmarshal(a.must(200, "GET", "/service/values/flag", nil), &v)
	if diff := cmp.Diff(hsm.Values{Flag: []string{"Unknown", "OK", "Warning", "Alert", "Locked"}}, v); diff != "" {
		t.Errorf("values/flag (-want +got):\n%s", diff)
	}
	v = hsm.Values{}
	json.Unmarshal(a.must(200, "GET", "/service/values", nil), &v)
	if len(v.State) != 8 || len(v.Type) < 40 || len(v.Role) == 0 || len(v.Arch) != 4 {
		t.Errorf("values: %+v", v)
	}
	a.must(404, "GET", "/service/values/colour", nil)
}
