package statemgr

import (
	"encoding/json"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/statemgr/redfish"
)

// TestHardwareHistory: a FRU swapped at a location between two walks is
// recorded as Removed (old FRU) and Added (new FRU); an unchanged walk adds nothing.
func TestHardwareHistory(t *testing.T) {
	e := newRFEnv(t, DiscoveryConfig{})
	walk := func(fru string) {
		t.Helper()
		res := &redfish.Result{EndpointID: "x3000c0s1b0", HWInventory: []redfish.HWInvByLoc{{
			ID: "x3000c0s1b0n0p0", Type: "Processor", Status: "Populated", HWInventoryByLocationType: "HWInvByLocProcessor",
			PopulatedFRU: &redfish.HWInvByFRU{FRUID: fru, Type: "Processor", HWInventoryByFRUType: "HWInvByFRUProcessor"},
		}}}
		if err := e.store.putInventory(t.Context(), res); err != nil {
			t.Fatal(err)
		}
	}
	walk("CPU-A")
	walk("CPU-A")
	walk("CPU-B")

	var byLoc struct{ Components []HWHistoryArray }
	if err := json.Unmarshal(e.must(200, "GET", "/Inventory/Hardware/History", nil), &byLoc); err != nil {
		t.Fatal(err)
	}
	want := []HWHistoryArray{{ID: "x3000c0s1b0n0p0", History: []HWHistory{
		{ID: "x3000c0s1b0n0p0", FRUID: "CPU-A", EventType: HWEventAdded},
		{ID: "x3000c0s1b0n0p0", FRUID: "CPU-A", EventType: HWEventRemoved},
		{ID: "x3000c0s1b0n0p0", FRUID: "CPU-B", EventType: HWEventAdded},
	}}}
	if diff := cmp.Diff(want, byLoc.Components, cmpopts.IgnoreFields(HWHistory{}, "Timestamp")); diff != "" {
		t.Errorf("history by location (-want +got):\n%s", diff)
	}
	var one HWHistoryArray
	if err := json.Unmarshal(e.must(200, "GET", "/Inventory/HardwareByFRU/History/CPU-B", nil), &one); err != nil {
		t.Fatal(err)
	}
	if len(one.History) != 1 || one.History[0].EventType != HWEventAdded {
		t.Errorf("history of CPU-B = %+v, want one Added", one)
	}
	var loc redfish.HWInvByLoc
	if err := json.Unmarshal(e.must(200, "GET", "/Inventory/Hardware/x3000c0s1b0n0p0", nil), &loc); err != nil {
		t.Fatal(err)
	}
	if loc.PopulatedFRU == nil || loc.PopulatedFRU.FRUID != "CPU-B" {
		t.Errorf("location = %+v, want CPU-B populated", loc)
	}
	e.must(200, "GET", "/Inventory/HardwareByFRU/CPU-A", nil)
	e.must(404, "GET", "/Inventory/Hardware/x3000c0s1b0n0p1", nil)
	e.must(400, "GET", "/Inventory/Hardware?color=red", nil)
}

// TestInventoryFilters checks the ComponentEndpoints and Hardware filters
// and deletes after a real discovery.
func TestInventoryFilters(t *testing.T) {
	const bmcX = "x3000c0s2b0"
	e := newRFEnv(t, DiscoveryConfig{})
	e.bmc(bmcX, 2, redfishsim.Faults{})
	e.must(201, "POST", "/Inventory/RedfishEndpoints", RedfishEndpoint{ID: bmcX, User: "root", Password: rfPassword, RediscoverOnUpdate: true})
	e.waitDiscovered(bmcX)
	count := func(path, key string) int {
		t.Helper()
		var m map[string][]json.RawMessage
		if err := json.Unmarshal(e.must(200, "GET", path, nil), &m); err != nil {
			t.Fatal(err)
		}
		return len(m[key])
	}
	for _, tc := range []struct {
		path string
		want int
	}{
		{"/Inventory/ComponentEndpoints?type=Node", 2},
		{"/Inventory/ComponentEndpoints?redfish_type=Manager", 1},
		{"/Inventory/ComponentEndpoints?redfish_ep=" + bmcX + "&type=Node&id=" + bmcX + "n1", 1},
		{"/Inventory/ComponentEndpoints?redfish_ep=x9c0s0b0", 0},
	} {
		if got := count(tc.path, "ComponentEndpoints"); got != tc.want {
			t.Errorf("GET %s: %d, want %d", tc.path, got, tc.want)
		}
	}
	var hw []json.RawMessage
	_ = json.Unmarshal(e.must(200, "GET", "/Inventory/Hardware?type=Processor", nil), &hw)
	if len(hw) != 4 {
		t.Errorf("processors: %d, want 4", len(hw))
	}
	var one []redfish.HWInvByLoc
	if err := json.Unmarshal(e.must(200, "GET", "/Inventory/Hardware?type=Processor&id="+bmcX+"n1p0", nil), &one); err != nil || len(one) != 1 {
		t.Fatalf("processor n1p0: %v %v", one, err)
	}
	_, _, serial := fruIdent(one[0].PopulatedFRU)
	if serial == "" {
		t.Fatal("processor FRU has no serial number")
	}
	hw = nil
	_ = json.Unmarshal(e.must(200, "GET", "/Inventory/Hardware?serialnumber="+url.QueryEscape(serial), nil), &hw)
	if len(hw) != 1 {
		t.Errorf("serialnumber=%s: %d locations, want 1", serial, len(hw))
	}
	e.must(200, "DELETE", "/Inventory/ComponentEndpoints/"+bmcX+"n1", nil)
	e.must(404, "GET", "/Inventory/ComponentEndpoints/"+bmcX+"n1", nil)
	e.must(200, "DELETE", "/Inventory/RedfishEndpoints/"+bmcX, nil)
	if got := count("/Inventory/ComponentEndpoints", "ComponentEndpoints"); got != 0 {
		t.Errorf("ComponentEndpoints after deleting their RedfishEndpoint: %d, want 0", got)
	}
}
