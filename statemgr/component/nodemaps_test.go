package component_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/statemgr/component"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
)

func TestNodeMapsAndDefaults(t *testing.T) { pg.EachDB(t, testNodeMapsAndDefaults) }

func testNodeMapsAndDefaults(t *testing.T, db testpeer.DB) {
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
	a := hsmtest.NewServerWithOn(t, db, core.Config{Layout: component.NewSLS(sls.URL, sls.Client())})

	a.Must(200, "POST", "/Defaults/NodeMaps", map[string]any{"NodeMaps": []map[string]any{
		{"ID": "x0c0s0b0n0", "NID": 10, "Role": "compute"}, {"ID": "x0c0s0b0n1", "NID": 11}}})
	a.Must(409, "POST", "/Defaults/NodeMaps", map[string]any{"NodeMaps": []map[string]any{{"ID": "x0c0s0b0n5", "NID": 10}}})
	a.Must(400, "POST", "/Defaults/NodeMaps", map[string]any{"NodeMaps": []map[string]any{{"ID": "x0c0s0b0", "NID": 12}}})
	a.Must(400, "POST", "/Defaults/NodeMaps", map[string]any{"NodeMaps": []map[string]any{{"ID": "x0c0s0b0n6", "NID": 0}}})
	var m hsm.NodeMap
	json.Unmarshal(a.Must(200, "GET", "/Defaults/NodeMaps/x0c0s0b0n0", nil), &m)
	if diff := cmp.Diff(hsm.NodeMap{ID: "x0c0s0b0n0", NID: 10, Role: "Compute"}, m); diff != "" {
		t.Errorf("GET NodeMap (-want +got):\n%s", diff)
	}
	a.Must(200, "PUT", "/Defaults/NodeMaps/x0c0s0b0n4", map[string]any{"NID": 14})
	a.Exact(200, "DELETE", "/Defaults/NodeMaps/x0c0s0b0n4", nil, `{"code":0,"message":"deleted 1 entry"}`+"\n")
	a.Exact(200, "PUT", "/Defaults/NodeMaps/x0c0s0b0n4v1", map[string]any{"NID": 15}, `{"ID":"x0c0s0b0n4v1","NID":15}`+"\n") // VirtualNodes too, as shipped
	a.Must(200, "DELETE", "/Defaults/NodeMaps/x0c0s0b0n4v1", nil)
	a.Must(404, "GET", "/Defaults/NodeMaps/x0c0s0b0n4", nil)

	a.Must(204, "POST", "/State/Components", map[string]any{"Components": []map[string]any{
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
	got := a.List("?roleonly=true")
	nids := a.List("?nidonly=true")
	for i := range got {
		got[i].NID = nids[i].NID
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
}
