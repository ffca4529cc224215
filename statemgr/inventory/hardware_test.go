package inventory

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
	"github.com/hmsuite/hms/statemgr/redfish"
)

// TestHardwareHistory: a FRU swapped at a location between two walks is
// recorded as Removed (old FRU) and Added (new FRU); an unchanged walk adds nothing.
func TestHardwareHistory(t *testing.T) { pg.EachDB(t, testHardwareHistory) }

func testHardwareHistory(t *testing.T, db testpeer.DB) {
	e := newRFEnvOn(t, db, DiscoveryConfig{})
	walk := func(fru string) {
		t.Helper()
		res := &redfish.Result{EndpointID: "x3000c0s1b0", HWInventory: []hsm.HWInvByLoc{{
			ID: "x3000c0s1b0n0p0", Type: "Processor", Status: "Populated", HWInventoryByLocationType: "HWInvByLocProcessor",
			PopulatedFRU: &hsm.HWInvByFRU{FRUID: fru, Type: "Processor", HWInventoryByFRUType: "HWInvByFRUProcessor"},
		}}}
		if err := e.store.putInventory(t.Context(), res); err != nil {
			t.Fatal(err)
		}
	}
	walk("CPU-A")
	walk("CPU-A")
	walk("CPU-B")

	var byLoc struct{ Components []hsm.HWHistoryArray }
	if err := json.Unmarshal(e.Must(200, "GET", "/Inventory/Hardware/History", nil), &byLoc); err != nil {
		t.Fatal(err)
	}
	want := []hsm.HWHistoryArray{{ID: "x3000c0s1b0n0p0", History: []hsm.HWHistory{
		{ID: "x3000c0s1b0n0p0", FRUID: "CPU-A", EventType: HWEventAdded},
		{ID: "x3000c0s1b0n0p0", FRUID: "CPU-A", EventType: HWEventRemoved},
		{ID: "x3000c0s1b0n0p0", FRUID: "CPU-B", EventType: HWEventAdded},
	}}}
	if diff := cmp.Diff(want, byLoc.Components, cmpopts.IgnoreFields(hsm.HWHistory{}, "Timestamp")); diff != "" {
		t.Errorf("history by location (-want +got):\n%s", diff)
	}
	var one hsm.HWHistoryArray
	if err := json.Unmarshal(e.Must(200, "GET", "/Inventory/HardwareByFRU/History/CPU-B", nil), &one); err != nil {
		t.Fatal(err)
	}
	if len(one.History) != 1 || one.History[0].EventType != HWEventAdded {
		t.Errorf("history of CPU-B = %+v, want one Added", one)
	}
	var loc hsm.HWInvByLoc
	if err := json.Unmarshal(e.Must(200, "GET", "/Inventory/Hardware/x3000c0s1b0n0p0", nil), &loc); err != nil {
		t.Fatal(err)
	}
	if loc.PopulatedFRU == nil || loc.PopulatedFRU.FRUID != "CPU-B" {
		t.Errorf("location = %+v, want CPU-B populated", loc)
	}
	e.Must(200, "GET", "/Inventory/HardwareByFRU/CPU-A", nil)
	e.Must(404, "GET", "/Inventory/Hardware/x3000c0s1b0n0p1", nil)
	// Unknown parameters are ignored on every listing, as shipped HSM does (issue 10).
	e.Must(200, "GET", "/Inventory/Hardware?color=red", nil)
}

// discoveredEnv is an API whose inventory comes from discovering a simulated
// BMC bmcX with two nodes (walked at once, not through the queue).
func discoveredEnv(t *testing.T, db testpeer.DB, bmcX string) *rfEnv {
	t.Helper()
	e := newRFEnvOn(t, db, DiscoveryConfig{})
	e.bmc(bmcX, 2, redfishsim.Faults{})
	e.Must(201, "POST", "/Inventory/RedfishEndpoints", hsm.RedfishEndpoint{ID: bmcX, User: "root", Password: rfPassword})
	e.disc.discover(t.Context(), bmcX)
	if st := e.endpoint(bmcX).DiscoveryInfo.LastDiscoveryStatus; st != string(redfish.StatusOK) {
		t.Fatalf("discovery of %s: %s", bmcX, st)
	}
	return e
}

// TestInventoryFilters checks the ComponentEndpoints and Hardware filters
// and deletes after a real discovery.
func TestInventoryFilters(t *testing.T) { pg.EachDB(t, testInventoryFilters) }

func testInventoryFilters(t *testing.T, db testpeer.DB) {
	const bmcX = "x3000c0s2b0"
	e := discoveredEnv(t, db, bmcX)
	count := func(path, key string) int {
		t.Helper()
		var m map[string][]json.RawMessage
		if err := json.Unmarshal(e.Must(200, "GET", path, nil), &m); err != nil {
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
	_ = json.Unmarshal(e.Must(200, "GET", "/Inventory/Hardware?type=Processor", nil), &hw)
	if len(hw) != 4 {
		t.Errorf("processors: %d, want 4", len(hw))
	}
	var one []hsm.HWInvByLoc
	if err := json.Unmarshal(e.Must(200, "GET", "/Inventory/Hardware?type=Processor&id="+bmcX+"n1p0", nil), &one); err != nil || len(one) != 1 {
		t.Fatalf("processor n1p0: %v %v", one, err)
	}
	_, _, serial := fruIdent(one[0].PopulatedFRU)
	if serial == "" {
		t.Fatal("processor FRU has no serial number")
	}
	hw = nil
	_ = json.Unmarshal(e.Must(200, "GET", "/Inventory/Hardware?serialnumber="+url.QueryEscape(serial), nil), &hw)
	if len(hw) != 1 {
		t.Errorf("serialnumber=%s: %d locations, want 1", serial, len(hw))
	}
	e.Must(200, "DELETE", "/Inventory/ComponentEndpoints/"+bmcX+"n1", nil)
	e.Must(404, "GET", "/Inventory/ComponentEndpoints/"+bmcX+"n1", nil)
	e.Must(200, "DELETE", "/Inventory/RedfishEndpoints/"+bmcX, nil)
	if got := count("/Inventory/ComponentEndpoints", "ComponentEndpoints"); got != 0 {
		t.Errorf("ComponentEndpoints after deleting their RedfishEndpoint: %d, want 0", got)
	}
}

// rfEnvAt is an API with discovery over the store at path, on clock now
// (nil: the real one).
func rfEnvAt(t *testing.T, path string, now func() time.Time) *rfEnv {
	t.Helper()
	s := openStore(t, path, now)
	creds, err := LoadCredKey(filepath.Join(t.TempDir(), "cred.key"))
	if err != nil {
		t.Fatal(err)
	}
	return newRFEnvOver(t, s, NewDiscovery(s, creds, DiscoveryConfig{}))
}

// histEnv is an API whose store runs on a settable clock, with three walks of
// x3000c0s1b0 an hour apart: p0 holds CPU-A, then CPU-B; p1 holds CPU-C,
// then CPU-A.
func histEnv(t *testing.T, db testpeer.DB) (*rfEnv, []time.Time) {
	t.Helper()
	clock := hsmtest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	e := rfEnvAt(t, db(t), clock.Now)
	s := e.store
	var times []time.Time
	for _, frus := range [][2]string{{"CPU-A", "CPU-C"}, {"CPU-B", "CPU-C"}, {"CPU-B", "CPU-A"}} {
		times = append(times, clock.Now())
		res := &redfish.Result{EndpointID: "x3000c0s1b0"}
		for i, fru := range frus {
			res.HWInventory = append(res.HWInventory, hsm.HWInvByLoc{
				ID: fmt.Sprintf("x3000c0s1b0n0p%d", i), Type: "Processor", Status: "Populated", HWInventoryByLocationType: "HWInvByLocProcessor",
				PopulatedFRU: &hsm.HWInvByFRU{FRUID: fru, Type: "Processor", HWInventoryByFRUType: "HWInvByFRUProcessor",
					ProcessorFRUInfo: &hsm.ProcessorFRUInfo{Manufacturer: "Intel", SerialNumber: "SN-" + fru}},
			})
		}
		if err := s.putInventory(t.Context(), res); err != nil {
			t.Fatal(err)
		}
		clock.Add(time.Hour)
	}
	return e, times
}

// TestHardwareHistoryFilters checks id, fruid, eventtype and the
// starttime/endtime window on both history collections and their /{key}
// forms, and that unknown or malformed filters are refused naming them.
func TestHardwareHistoryFilters(t *testing.T) { pg.EachDB(t, testHardwareHistoryFilters) }

func testHardwareHistoryFilters(t *testing.T, db testpeer.DB) {
	e, ts := histEnv(t, db)
	const p0, p1 = "x3000c0s1b0n0p0", "x3000c0s1b0n0p1"
	ev := func(id, fru, typ string, at int) hsm.HWHistory {
		return hsm.HWHistory{ID: id, FRUID: fru, EventType: typ, Timestamp: ts[at]}
	}
	var (
		aAdd0, aRem0, bAdd0 = ev(p0, "CPU-A", HWEventAdded, 0), ev(p0, "CPU-A", HWEventRemoved, 1), ev(p0, "CPU-B", HWEventAdded, 1)
		cAdd1, cRem1, aAdd1 = ev(p1, "CPU-C", HWEventAdded, 0), ev(p1, "CPU-C", HWEventRemoved, 2), ev(p1, "CPU-A", HWEventAdded, 2)
	)
	at := func(i int) string { return url.QueryEscape(ts[i].Format(time.RFC3339)) }
	plusOne := url.QueryEscape(ts[1].In(time.FixedZone("", 3600)).Format(time.RFC3339)) // same instant, +01:00
	type arr = hsm.HWHistoryArray
	type hs = []hsm.HWHistory
	for _, tc := range []struct {
		path string
		want []arr // the collection's Components
		one  *arr  // or the /{key} form's body
	}{
		{path: "/Inventory/Hardware/History", want: []arr{{ID: p0, History: hs{aAdd0, aRem0, bAdd0}}, {ID: p1, History: hs{cAdd1, cRem1, aAdd1}}}},
		{path: "/Inventory/Hardware/History?id=" + p1 + "&eventtype=added", want: []arr{{ID: p1, History: hs{cAdd1, aAdd1}}}},
		{path: "/Inventory/Hardware/History?id=X3000c0s1b0n0p0&id=" + p1 + "&eventtype=Removed", want: []arr{{ID: p0, History: hs{aRem0}}, {ID: p1, History: hs{cRem1}}}},
		{path: "/Inventory/Hardware/History?starttime=" + at(1), want: []arr{{ID: p0, History: hs{aRem0, bAdd0}}, {ID: p1, History: hs{cRem1, aAdd1}}}},
		{path: "/Inventory/Hardware/History?starttime=" + plusOne, want: []arr{{ID: p0, History: hs{aRem0, bAdd0}}, {ID: p1, History: hs{cRem1, aAdd1}}}},
		{path: "/Inventory/Hardware/History?endtime=" + at(1), want: []arr{{ID: p0, History: hs{aAdd0, aRem0, bAdd0}}, {ID: p1, History: hs{cAdd1}}}},
		{path: "/Inventory/Hardware/History?StartTime=" + at(1) + "&EndTime=" + at(1), want: []arr{{ID: p0, History: hs{aRem0, bAdd0}}}},
		{path: "/Inventory/Hardware/History?id=x9000c0s0b0n0p0", want: []arr{}},
		{path: "/Inventory/HardwareByFRU/History?fruid=CPU-A", want: []arr{{ID: "CPU-A", History: hs{aAdd0, aRem0, aAdd1}}}},
		{path: "/Inventory/HardwareByFRU/History?eventtype=Added&starttime=" + at(1), want: []arr{{ID: "CPU-A", History: hs{aAdd1}}, {ID: "CPU-B", History: hs{bAdd0}}}},
		{path: "/Inventory/HardwareByFRU/History?endtime=" + at(0), want: []arr{{ID: "CPU-A", History: hs{aAdd0}}, {ID: "CPU-C", History: hs{cAdd1}}}},
		{path: "/Inventory/Hardware/History/" + p0 + "?eventtype=Added&starttime=" + at(1), one: &arr{ID: p0, History: hs{bAdd0}}},
		{path: "/Inventory/Hardware/History/" + p1 + "?endtime=" + at(1), one: &arr{ID: p1, History: hs{cAdd1}}},
		{path: "/Inventory/Hardware/History/" + p0 + "?starttime=2030-01-01T00:00:00Z", one: &arr{ID: p0, History: hs{}}},
		{path: "/Inventory/HardwareByFRU/History/CPU-C?eventtype=REMOVED", one: &arr{ID: "CPU-C", History: hs{cRem1}}},
		{path: "/Inventory/HardwareByFRU/History/CPU-A?starttime=" + at(1) + "&endtime=" + at(2), one: &arr{ID: "CPU-A", History: hs{aRem0, aAdd1}}},
	} {
		t.Run(tc.path, func(t *testing.T) {
			body := e.Must(200, "GET", tc.path, nil)
			var got any = &struct{ Components []arr }{}
			var want any = &struct{ Components []arr }{Components: tc.want}
			if tc.one != nil {
				got, want = &arr{}, tc.one
			}
			if err := json.Unmarshal(body, got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	for _, tc := range []struct {
		path   string
		status int
		detail string // must appear in the problem detail
	}{
		{path: "/Inventory/Hardware/History?eventtype=Exploded", status: 400, detail: `eventtype: invalid value "Exploded"`},
		{path: "/Inventory/HardwareByFRU/History?starttime=yesterday", status: 400, detail: "starttime"},
		{path: "/Inventory/Hardware/History/" + p0 + "?endtime=2026-01-01", status: 400, detail: "endtime"},
		{path: "/Inventory/Hardware/History/x3000c0s1b0n0p7", status: 400, detail: "x3000c0s1b0n0p7"},
	} {
		t.Run(tc.path, func(t *testing.T) { wantProblem(t, e, "GET", tc.path, tc.status, tc.detail) })
	}
	// Parameters a route does not take (another route's filter, or none
	// at all) are ignored, as shipped HSM ignores them (issue 10).
	for _, path := range []string{"/Inventory/Hardware/History?fruid=CPU-A", "/Inventory/HardwareByFRU/History?id=" + p0,
		"/Inventory/Hardware/History/" + p0 + "?id=" + p0, "/Inventory/HardwareByFRU/History/CPU-A?fruid=CPU-A",
		"/Inventory/Hardware/History?color=red", "/Inventory/Hardware/Query/all?color=red"} {
		e.Must(200, "GET", path, nil)
	}
	// Something never seen has an empty history (200), as in the shipped HSM.
	for path, want := range map[string]string{
		"/Inventory/Hardware/History/x3000c0s1b0n0p3":                 `{"ID":"x3000c0s1b0n0p3","History":[]}`,
		"/Inventory/Hardware/History/x3000c0s1b0n0p3?eventtype=Added": `{"ID":"x3000c0s1b0n0p3","History":[]}`,
		"/Inventory/HardwareByFRU/History/CPU-Z":                      `{"ID":"CPU-Z","History":[]}`,
	} {
		if got := string(e.Must(200, "GET", path, nil)); got != want+"\n" {
			t.Errorf("GET %s: %s, want %s", path, got, want)
		}
	}
}

// wantProblem checks that method path answers status with a problem whose
// detail names detail.
func wantProblem(t *testing.T, e *rfEnv, method, path string, status int, detail string) {
	t.Helper()
	got, body := e.Do(method, path, "")
	var p struct {
		Status int
		Detail string
	}
	if err := json.Unmarshal(body, &p); err != nil || got != status || p.Status != status || !strings.Contains(p.Detail, detail) {
		t.Errorf("%s %s: %d %s, want %d naming %q", method, path, got, body, status, detail)
	}
}

// wantDeleted checks that DELETE path answers 200 with HSM's exact body,
// {"code":0,"message":msg}.
func wantDeleted(t *testing.T, e *rfEnv, path, msg string) {
	t.Helper()
	got := string(e.Must(200, "DELETE", path, nil))
	if want := `{"code":0,"message":"` + msg + `"}` + "\n"; got != want {
		t.Errorf("DELETE %s: %s, want %s", path, got, want)
	}
}

// TestHardwareDeletes: FRUs held by a location cannot be deleted (409, and
// nothing is deleted), free ones can; history deletes by location, by FRU
// and all; each delete of nothing is 404.
func TestHardwareDeletes(t *testing.T) { pg.EachDB(t, testHardwareDeletes) }

func testHardwareDeletes(t *testing.T, db testpeer.DB) {
	e, _ := histEnv(t, db)
	const p0, p1 = "x3000c0s1b0n0p0", "x3000c0s1b0n0p1"
	frus := func() int {
		t.Helper()
		var l []json.RawMessage
		if err := json.Unmarshal(e.Must(200, "GET", "/Inventory/HardwareByFRU", nil), &l); err != nil {
			t.Fatal(err)
		}
		return len(l)
	}
	deleted := func(path, msg string) { t.Helper(); wantDeleted(t, e, path, msg) }
	wantProblem(t, e, "DELETE", "/Inventory/HardwareByFRU/CPU-A", 409, p1)
	wantProblem(t, e, "DELETE", "/Inventory/HardwareByFRU", 409, p0)
	if n := frus(); n != 3 {
		t.Fatalf("FRUs after refused deletes: %d, want 3", n)
	}
	deleted("/Inventory/HardwareByFRU/CPU-C", "deleted 1 entry")
	wantProblem(t, e, "GET", "/Inventory/HardwareByFRU/CPU-C", 404, "CPU-C")
	wantProblem(t, e, "DELETE", "/Inventory/HardwareByFRU/CPU-C", 404, "no such FRU ID.")

	deleted("/Inventory/Hardware/History/X3000c0s1b0n0p0", "deleted 3 entries")
	e.Must(200, "GET", "/Inventory/Hardware/History/"+p0, nil)
	wantProblem(t, e, "DELETE", "/Inventory/Hardware/History/"+p0, 404, "no entries to delete")
	deleted("/Inventory/HardwareByFRU/History/CPU-C", "deleted 2 entries")
	wantProblem(t, e, "DELETE", "/Inventory/HardwareByFRU/History/CPU-C", 404, "no entries to delete")
	deleted("/Inventory/Hardware/History", "deleted 1 entries") // HSM's wording for any collection
	wantProblem(t, e, "DELETE", "/Inventory/Hardware/History", 404, "no entries to delete")
	if got := string(e.Must(200, "GET", "/Inventory/HardwareByFRU/History", nil)); strings.TrimSpace(got) != `{"Components":[]}` {
		t.Errorf("history after deleting all: %s", got)
	}

	// A walk that finds no hardware frees the FRUs.
	if err := e.store.putInventory(t.Context(), &redfish.Result{EndpointID: "x3000c0s1b0"}); err != nil {
		t.Fatal(err)
	}
	deleted("/Inventory/HardwareByFRU", "deleted 2 entries")
	wantProblem(t, e, "DELETE", "/Inventory/HardwareByFRU", 404, "no entries to delete")
}

// TestFRUFiltersAndServiceEndpointDeletes discovers a simulated BMC, then
// checks every HardwareByFRU filter, the refusal to delete a FRU a location
// holds, and the ServiceEndpoints deletes.
func TestFRUFiltersAndServiceEndpointDeletes(t *testing.T) {
	pg.EachDB(t, testFRUFiltersAndServiceEndpointDeletes)
}

func testFRUFiltersAndServiceEndpointDeletes(t *testing.T, db testpeer.DB) {
	const bmcX = "x3000c0s2b0"
	e := discoveredEnv(t, db, bmcX)
	var cpu []hsm.HWInvByLoc
	if err := json.Unmarshal(e.Must(200, "GET", "/Inventory/Hardware?id="+bmcX+"n1p0", nil), &cpu); err != nil || len(cpu) != 1 || cpu[0].PopulatedFRU == nil {
		t.Fatalf("processor n1p0: %v %v", cpu, err)
	}
	fru := cpu[0].PopulatedFRU
	manu, pn, sn := fruIdent(fru)
	var mem []json.RawMessage
	_ = json.Unmarshal(e.Must(200, "GET", "/Inventory/Hardware?type=Memory", nil), &mem)
	if manu == "" || pn == "" || sn == "" || len(mem) == 0 {
		t.Fatalf("simulated inventory lacks what the test needs: %q %q %q, %d DIMMs", manu, pn, sn, len(mem))
	}
	q := url.QueryEscape
	for _, tc := range []struct {
		query string
		want  int
	}{
		{query: "type=Processor", want: 4},
		{query: "type=memory", want: len(mem)},
		{query: "manufacturer=" + q(manu), want: 4},
		{query: "partnumber=" + q(pn), want: 4},
		{query: "serialnumber=" + q(sn), want: 1},
		{query: "fruid=" + q(fru.FRUID), want: 1},
		{query: "type=Memory&manufacturer=" + q(manu), want: 0},
		{query: "SerialNumber=nobody&serialnumber=" + q(sn), want: 1},
		{query: "partnumber=nothing", want: 0},
	} {
		var got []hsm.HWInvByFRU
		if err := json.Unmarshal(e.Must(200, "GET", "/Inventory/HardwareByFRU?"+tc.query, nil), &got); err != nil {
			t.Fatal(err)
		}
		if len(got) != tc.want {
			t.Errorf("HardwareByFRU?%s: %d FRUs, want %d", tc.query, len(got), tc.want)
		}
		if tc.want == 1 && got[0].FRUID != fru.FRUID {
			t.Errorf("HardwareByFRU?%s: %s, want %s", tc.query, got[0].FRUID, fru.FRUID)
		}
	}
	e.Must(200, "GET", "/Inventory/HardwareByFRU?color=red", nil) // unknown parameters are ignored, as shipped
	wantProblem(t, e, "DELETE", "/Inventory/HardwareByFRU/"+fru.FRUID, 409, bmcX+"n1p0")
	e.Must(200, "GET", "/Inventory/HardwareByFRU/"+fru.FRUID, nil)

	var ses struct{ ServiceEndpoints []hsm.ServiceEndpoint }
	if err := json.Unmarshal(e.Must(200, "GET", "/Inventory/ServiceEndpoints", nil), &ses); err != nil || len(ses.ServiceEndpoints) < 2 {
		t.Fatalf("service endpoints: %v %v", ses, err)
	}
	one := "/Inventory/ServiceEndpoints/" + ses.ServiceEndpoints[0].RedfishType + "/RedfishEndpoints/" + bmcX
	e.Must(200, "DELETE", one, nil)
	wantProblem(t, e, "GET", one, 404, bmcX)
	wantProblem(t, e, "DELETE", one, 404, "no such service under redfish endpoint.")
	wantProblem(t, e, "DELETE", "/Inventory/ServiceEndpoints/"+ses.ServiceEndpoints[1].RedfishType+"/RedfishEndpoints/x9000c0s0b0", 404, "no such service under redfish endpoint.")
	wantDeleted(t, e, "/Inventory/ServiceEndpoints", fmt.Sprintf("deleted %d entries", len(ses.ServiceEndpoints)-1))
	if got := strings.TrimSpace(string(e.Must(200, "GET", "/Inventory/ServiceEndpoints", nil))); got != `{"ServiceEndpoints":[]}` {
		t.Errorf("service endpoints after deleting all: %s", got)
	}
	wantProblem(t, e, "DELETE", "/Inventory/ServiceEndpoints", 404, "no entries to delete")
}

// TestFRUColumnsMigrated: FRUs and locations stored before migration 0013
// answer the manufacturer, partnumber and serialnumber filters after it.
func TestFRUColumnsMigrated(t *testing.T) {
	db, path := openBefore(t, "0013")
	fru := hsm.HWInvByFRU{FRUID: "MEM-1", Type: "Memory", HWInventoryByFRUType: "HWInvByFRUMemory",
		MemoryFRUInfo: &hsm.MemoryFRUInfo{Manufacturer: "Hynix", PartNumber: "HMA84", SerialNumber: "S-1"}}
	loc := hsm.HWInvByLoc{ID: "x3000c0s1b0n0d0", Type: "Memory", Status: "Populated", HWInventoryByLocationType: "HWInvByLocMemory", PopulatedFRU: &fru}
	fb, _ := json.Marshal(fru)
	lb, _ := json.Marshal(loc)
	bare, _ := json.Marshal(hsm.HWInvByFRU{FRUID: "BARE", Type: "Node", HWInventoryByFRUType: "HWInvByFRUNode"})
	for _, st := range []struct {
		q    string
		args []any
	}{
		{`INSERT INTO rf_hw_frus (fru_id, type, body) VALUES (?, ?, ?), (?, ?, ?)`, []any{"MEM-1", "Memory", string(fb), "BARE", "Node", string(bare)}},
		{`INSERT INTO rf_hw_locations (id, type, redfish_ep, fru_id, body) VALUES (?, ?, ?, ?, ?)`, []any{loc.ID, "Memory", "x3000c0s1b0", "MEM-1", string(lb)}},
	} {
		if _, err := db.W.ExecContext(t.Context(), st.q, st.args...); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	e := rfEnvAt(t, path, nil)
	for _, p := range []string{"/Inventory/HardwareByFRU?manufacturer=Hynix&partnumber=HMA84&serialnumber=S-1",
		"/Inventory/Hardware?manufacturer=Hynix&partnumber=HMA84&serialnumber=S-1"} {
		var got []json.RawMessage
		if err := json.Unmarshal(e.Must(200, "GET", p, nil), &got); err != nil || len(got) != 1 {
			t.Errorf("GET %s: %d entries (%v), want 1", p, len(got), err)
		}
	}
	var got []hsm.HWInvByFRU
	_ = json.Unmarshal(e.Must(200, "GET", "/Inventory/HardwareByFRU?serialnumber=", nil), &got)
	if len(got) != 1 || got[0].FRUID != "BARE" {
		t.Errorf("FRUs without serial number: %+v, want BARE", got)
	}
}

// hwCount returns how many locations GET /Inventory/Hardware lists and how
// many history events there are.
func hwCount(t *testing.T, e *rfEnv) (locs, events int) {
	t.Helper()
	var l []json.RawMessage
	if err := json.Unmarshal(e.Must(200, "GET", "/Inventory/Hardware", nil), &l); err != nil {
		t.Fatal(err)
	}
	var h struct{ Components []hsm.HWHistoryArray }
	if err := json.Unmarshal(e.Must(200, "GET", "/Inventory/Hardware/History", nil), &h); err != nil {
		t.Fatal(err)
	}
	for _, c := range h.Components {
		events += len(c.History)
	}
	return len(l), events
}

// TestHardwarePost: POST /Inventory/Hardware completes the spec's example
// entry as discovery would, records FRU changes as a walk does, and refuses
// a batch with one bad entry whole, naming the field.
func TestHardwarePost(t *testing.T) { pg.EachDB(t, testHardwarePost) }

func testHardwarePost(t *testing.T, db testpeer.DB) {
	e, _ := histEnv(t, db) // p0 holds CPU-B, p1 CPU-A
	const nic = `{"ID":"X3000c0s23b4n4h0","HWInventoryByLocationType":"HWInvByLocNodeHsnNic",
		"HSNNICLocationInfo":{"Id":"HPCNet3","Description":"Shasta Timms NMC REV04 (HSN)"},
		"PopulatedFRU":{"FRUID":"ignored","HWInventoryByFRUType":"HWInvByFRUNodeHsnNic","HSNNICFRUInfo":{"Model":"ConnectX-5 100Gb/s",
		"SerialNumber":"HG20190738","PartNumber":"102005303","Manufacturer":"Mellanox Technologies, Ltd."}}}`
	const cpu = `{"ID":"x3000c0s1b0n0p1","Type":"processor","Ordinal":1,"Status":"Populated","ProcessorLocationInfo":{"Id":"CPU1"},
		"PopulatedFRU":{"FRUID":"CPU-D","Type":"Processor","Subtype":"EPYC","ProcessorFRUInfo":{"Manufacturer":"AMD","SerialNumber":"SN-D"}},"Junk":1}`
	const cpuFRU = "Processor.AMD..SN-D" // the posted FRUID is replaced, as the shipped HSM does
	const empty = `{"ID":"x3000c0s1b0n0d0","Status":"Empty","MemoryLocationInfo":{"Id":"DIMM0"},"PopulatedFRU":null}`
	status, body := e.Do("POST", "/Inventory/Hardware", `{"Hardware":[`+nic+`,`+cpu+`,`+empty+`]}`)
	if status != 200 || string(body) != `{"code":0,"message":"Created 3 entries"}`+"\n" {
		t.Fatalf("POST: %d %s", status, body)
	}
	var got map[string]any
	if err := json.Unmarshal(e.Must(200, "GET", "/Inventory/Hardware/x3000c0s23b4n4h0", nil), &got); err != nil {
		t.Fatal(err)
	}
	const nicFRU = "NodeHsnNic.Mellanox_Technologies,_Ltd..102005303.HG20190738"
	want := map[string]any{"ID": "x3000c0s23b4n4h0", "Type": "NodeHsnNic", "Ordinal": 0.0, "Status": "Populated",
		"HWInventoryByLocationType": "HWInvByLocNodeHsnNic",
		"HSNNICLocationInfo":        map[string]any{"Id": "HPCNet3", "Description": "Shasta Timms NMC REV04 (HSN)"},
		"PopulatedFRU": map[string]any{"FRUID": nicFRU, "Type": "NodeHsnNic", "HWInventoryByFRUType": "HWInvByFRUNodeHsnNic", "Subtype": "",
			"HSNNICFRUInfo": map[string]any{"Model": "ConnectX-5 100Gb/s", "SerialNumber": "HG20190738", "PartNumber": "102005303",
				"Manufacturer": "Mellanox Technologies, Ltd."}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("posted NIC (-want +got):\n%s", diff)
	}
	var empt hsm.HWInvByLoc
	_ = json.Unmarshal(e.Must(200, "GET", "/Inventory/Hardware/x3000c0s1b0n0d0", nil), &empt)
	if empt.Status != "Empty" || empt.Type != "Memory" || empt.PopulatedFRU != nil || empt.MemoryLocationInfo == nil {
		t.Errorf("posted empty DIMM slot: %+v", empt)
	}
	var frus []hsm.HWInvByFRU
	_ = json.Unmarshal(e.Must(200, "GET", "/Inventory/HardwareByFRU?serialnumber=HG20190738&manufacturer="+url.QueryEscape("Mellanox Technologies, Ltd."), nil), &frus)
	if len(frus) != 1 || frus[0].FRUID != nicFRU {
		t.Errorf("FRU of the posted NIC by its serial number: %+v", frus)
	}
	history := func(id string) []string {
		t.Helper()
		var h hsm.HWHistoryArray
		_ = json.Unmarshal(e.Must(200, "GET", "/Inventory/Hardware/History/"+id, nil), &h)
		var out []string
		for _, ev := range h.History {
			out = append(out, ev.EventType+" "+ev.FRUID)
		}
		return out
	}
	for id, want := range map[string][]string{
		"x3000c0s23b4n4h0": {"Added " + nicFRU},
		"x3000c0s1b0n0p1":  {"Added CPU-C", "Removed CPU-C", "Added CPU-A", "Removed CPU-A", "Added " + cpuFRU},
	} {
		if diff := cmp.Diff(want, history(id)); diff != "" {
			t.Errorf("history of %s (-want +got):\n%s", id, diff)
		}
	}
	// No history yet: 200 with an empty list, as the shipped HSM answers.
	if got := string(e.Must(200, "GET", "/Inventory/Hardware/History/x3000c0s1b0n0d0", nil)); got != `{"ID":"x3000c0s1b0n0d0","History":[]}`+"\n" {
		t.Errorf("history of a location without events: %s", got)
	}
	var fru map[string]any
	_ = json.Unmarshal(e.Must(200, "GET", "/Inventory/HardwareByFRU/"+cpuFRU, nil), &fru)
	if fru["Subtype"] != "EPYC" {
		t.Errorf("posted FRU Subtype: %v", fru)
	}

	// The same FRU posted again is no event; a walk finding a posted
	// location takes it over and records the FRU it replaced.
	e.Must(200, "POST", "/Inventory/Hardware", map[string]any{"Hardware": []json.RawMessage{json.RawMessage(cpu)}})
	res := &redfish.Result{EndpointID: "x3000c0s23b4", HWInventory: []hsm.HWInvByLoc{{ID: "x3000c0s23b4n4h0", Type: "NodeHsnNic",
		Status: "Populated", HWInventoryByLocationType: "HWInvByLocNodeHsnNic", PopulatedFRU: &hsm.HWInvByFRU{FRUID: "NIC-2", Type: "NodeHsnNic"}}}}
	if err := e.store.putInventory(t.Context(), res); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Added " + nicFRU, "Removed " + nicFRU, "Added NIC-2"}, history("x3000c0s23b4n4h0")); diff != "" {
		t.Errorf("history of the NIC after a walk (-want +got):\n%s", diff)
	}
	if h := history("x3000c0s1b0n0p1"); len(h) != 5 {
		t.Errorf("re-posting the same FRU added events: %v", h)
	}

	locs, events := hwCount(t, e)
	good := `{"ID":"x3000c0s1b0n0p0","ProcessorLocationInfo":{},"PopulatedFRU":{"ProcessorFRUInfo":{"SerialNumber":"NEW"}}}`
	for _, tc := range []struct{ name, body, detail string }{
		{name: "malformed", body: `{"Hardware":[`, detail: "JSON"},
		{name: "no entries", body: `{"Hardware":[]}`, detail: "Hardware"},
		{name: "no ID", body: `{"Hardware":[` + good + `,{"Type":"Node"}]}`, detail: "Hardware[1].ID: required"},
		{name: "bad ID", body: `{"Hardware":[` + good + `,{"ID":"x3000c9"}]}`, detail: `Hardware[1].ID: "x3000c9" is not a valid xname`},
		{name: "ID not a string", body: `{"Hardware":[{"ID":7}]}`, detail: "Hardware[0].ID: expected a string"},
		{name: "type without inventory", body: `{"Hardware":[{"ID":"x3000c0s1b0n0i0"}]}`, detail: "Hardware[0].ID: x3000c0s1b0n0i0 is a NodeNic"},
		{name: "wrong Type", body: `{"Hardware":[` + good + `,{"ID":"x3000c0s1b0n0","NodeLocationInfo":{},"Type":"Processor"}]}`, detail: "Hardware[1].Type"},
		{name: "wrong location type", body: `{"Hardware":[{"ID":"x3000c0s1b0n0","NodeLocationInfo":{},"HWInventoryByLocationType":"HWInvByLocMemory"}]}`, detail: "Hardware[0].HWInventoryByLocationType"},
		{name: "bad Ordinal", body: `{"Hardware":[{"ID":"x3000c0s1b0n0","NodeLocationInfo":{},"Ordinal":-1}]}`, detail: "Hardware[0].Ordinal"},
		{name: "Empty but populated", body: `{"Hardware":[{"ID":"x3000c0s1b0n0","NodeLocationInfo":{},"Status":"Empty","PopulatedFRU":{"NodeFRUInfo":{}}}]}`, detail: "Hardware[0].Status"},
		{name: "bad Status", body: `{"Hardware":[{"ID":"x3000c0s1b0n0","NodeLocationInfo":{},"Status":"Gone"}]}`, detail: "Hardware[0].Status"},
		{name: "location info not an object", body: `{"Hardware":[{"ID":"x3000c0s1b0n0","NodeLocationInfo":"n0"}]}`, detail: "Hardware[0].NodeLocationInfo"},
		{name: "FRU not an object", body: `{"Hardware":[{"ID":"x3000c0s1b0n0","NodeLocationInfo":{},"PopulatedFRU":"N"}]}`, detail: "Hardware[0].PopulatedFRU"},
		{name: "wrong FRU type", body: `{"Hardware":[{"ID":"x3000c0s1b0n0","NodeLocationInfo":{},"PopulatedFRU":{"Type":"Memory"}}]}`, detail: "Hardware[0].PopulatedFRU.Type"},
		{name: "wrong FRU discriminator", body: `{"Hardware":[{"ID":"x3000c0s1b0n0","NodeLocationInfo":{},"PopulatedFRU":{"HWInventoryByFRUType":"HWInvByFRUMemory"}}]}`, detail: "Hardware[0].PopulatedFRU.HWInventoryByFRUType"},
		{name: "no location info", body: `{"Hardware":[` + good + `,{"ID":"x3000c0s1b0n0","PopulatedFRU":{"NodeFRUInfo":{}}}]}`, detail: "Component location info is empty"},
		{name: "no FRU info", body: `{"Hardware":[` + good + `,{"ID":"x3000c0s1b0n0","NodeLocationInfo":{},"PopulatedFRU":{"FRUID":"N"}}]}`, detail: "FRU info is empty"},
		{name: "bad FRU info", body: `{"Hardware":[{"ID":"x3000c0s1b0n0","NodeLocationInfo":{},"PopulatedFRU":{"NodeFRUInfo":{"SerialNumber":5}}}]}`, detail: "Hardware[0].PopulatedFRU.NodeFRUInfo"},
		{name: "twice", body: `{"Hardware":[` + good + `,{"ID":"X3000c0s1b0n0p0","ProcessorLocationInfo":{}}]}`, detail: "Hardware[1].ID: x3000c0s1b0n0p0 is given twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := e.Do("POST", "/Inventory/Hardware", tc.body)
			var p struct{ Detail string }
			if err := json.Unmarshal(body, &p); err != nil || status != 400 || !strings.Contains(p.Detail, tc.detail) {
				t.Errorf("POST %s: %d %s, want 400 naming %q", tc.body, status, body, tc.detail)
			}
			if l, ev := hwCount(t, e); l != locs || ev != events {
				t.Errorf("after a refused POST: %d locations, %d events; want %d, %d", l, ev, locs, events)
			}
		})
	}
	e.Must(404, "GET", "/Inventory/HardwareByFRU/Processor...NEW", nil)
}

// TestHardwareDeleteLocations: DELETE of one location and of all of them
// answers the count, 404 when there is nothing, 400 for a bad xname, and
// keeps the FRUs and the history.
func TestHardwareDeleteLocations(t *testing.T) { pg.EachDB(t, testHardwareDeleteLocations) }

func testHardwareDeleteLocations(t *testing.T, db testpeer.DB) {
	e, _ := histEnv(t, db) // p0 holds CPU-B, p1 CPU-A
	const p0 = "x3000c0s1b0n0p0"
	deleted := func(path, msg string) { t.Helper(); wantDeleted(t, e, path, msg) }
	wantProblem(t, e, "DELETE", "/Inventory/Hardware/x3000c9", 400, "x3000c9")
	wantProblem(t, e, "DELETE", "/Inventory/Hardware/x3000c0s1b0n0p3", 404, "no such xname.")
	_, events := hwCount(t, e)
	deleted("/Inventory/Hardware/X3000c0s1b0n0p0", "deleted 1 entry")
	wantProblem(t, e, "GET", "/Inventory/Hardware/"+p0, 404, p0)
	wantProblem(t, e, "DELETE", "/Inventory/Hardware/"+p0, 404, "no such xname.")
	e.Must(200, "GET", "/Inventory/HardwareByFRU/CPU-B", nil)
	deleted("/Inventory/Hardware", "deleted 1 entries")
	wantProblem(t, e, "DELETE", "/Inventory/Hardware", 404, "no entries to delete")
	if locs, ev := hwCount(t, e); locs != 0 || ev != events {
		t.Errorf("after deleting every location: %d locations, %d events; want 0, %d", locs, ev, events)
	}
	deleted("/Inventory/HardwareByFRU", "deleted 3 entries") // no location holds them now
}

// TestInventoryFilterValues: an invalid xname or type in an inventory
// filter or path is 400 naming it, as on /State/Components.
func TestInventoryFilterValues(t *testing.T) { pg.EachDB(t, testInventoryFilterValues) }

func testInventoryFilterValues(t *testing.T, db testpeer.DB) {
	e, _ := histEnv(t, db)
	for _, tc := range []struct{ method, path, detail string }{
		{"GET", "/Inventory/Hardware?id=x3000c9", "query parameter id"},
		{"GET", "/Inventory/Hardware?type=Blade", "query parameter type"},
		{"GET", "/Inventory/HardwareByFRU?type=Blade", "query parameter type"},
		{"GET", "/Inventory/Hardware/History?id=bogus", "query parameter id"},
		{"GET", "/Inventory/ComponentEndpoints?type=Blade", "query parameter type"},
		{"GET", "/Inventory/ComponentEndpoints?redfish_ep=bogus", "query parameter redfish_ep"},
		{"GET", "/Inventory/ServiceEndpoints?redfish_ep=bogus", "query parameter redfish_ep"},
		{"GET", "/Inventory/Hardware/bogus", `xname: "bogus"`},
		{"GET", "/Inventory/Hardware/History/bogus", `xname: "bogus"`},
		{"DELETE", "/Inventory/Hardware/History/bogus", `xname: "bogus"`},
	} {
		wantProblem(t, e, tc.method, tc.path, 400, tc.detail)
	}
	var l []json.RawMessage
	_ = json.Unmarshal(e.Must(200, "GET", "/Inventory/Hardware?id=X3000c0s1b0n0p0&type=processor", nil), &l)
	if len(l) != 1 {
		t.Errorf("id and type in other spellings: %d locations, want 1", len(l))
	}
}

// hwShape reduces an HWInventory to the IDs of each array, nested arrays
// keyed by their path ("Nodes/x0c0s0b0n0/Processors"), after checking that
// no empty array is sent (the shipped HSM omits them).
func hwShape(t *testing.T, body []byte) (xn, format string, shape map[string][]string) {
	t.Helper()
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal(top["XName"], &xn)
	_ = json.Unmarshal(top["Format"], &format)
	shape = map[string][]string{}
	var walk func(prefix string, arr json.RawMessage)
	walk = func(path string, arr json.RawMessage) {
		var locs []map[string]json.RawMessage
		if err := json.Unmarshal(arr, &locs); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, l := range locs {
			var id string
			_ = json.Unmarshal(l["ID"], &id)
			shape[path] = append(shape[path], id)
			for k, v := range l {
				if strings.HasPrefix(string(v), "[") {
					walk(path+"/"+id+"/"+k, v)
				}
			}
		}
	}
	for name, v := range top {
		if name == "XName" || name == "Format" {
			continue
		}
		if !slices.Contains(hwArrays, name) || string(v) == "[]" || string(v) == "null" {
			t.Errorf("HWInventory has array %s: %s", name, v)
		}
		walk(name, v)
	}
	return xn, format, shape
}

// TestHardwareQuery checks GET /Inventory/Hardware/Query/{xname} in each
// format and with each filter over a discovered BMC (NodeBMC, NodeEnclosure,
// two nodes with two CPUs and four DIMMs each) plus posted cabinet,
// chassis, blade and HSN NIC locations, and n1 in partition p1.
func TestHardwareQuery(t *testing.T) { pg.EachDB(t, testHardwareQuery) }

func testHardwareQuery(t *testing.T, db testpeer.DB) {
	const b = "x3000c0s2b0"
	e := discoveredEnv(t, db, b)
	e.Must(200, "POST", "/Inventory/Hardware", map[string]any{"Hardware": []map[string]any{
		{"ID": "x3000", "CabinetLocationInfo": map[string]any{}}, {"ID": "x3000c0", "ChassisLocationInfo": map[string]any{}},
		{"ID": "x3000c0s2", "ComputeModuleLocationInfo": map[string]any{}}, {"ID": b + "n0h0", "HSNNICLocationInfo": map[string]any{}}}})
	e.Must(201, "POST", "/partitions", map[string]any{"name": "p1", "members": map[string]any{"ids": []string{b + "n1"}}})
	ids := func(node string, kind string, n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("%s%s%d", node, kind, i))
		}
		return out
	}
	n0, n1 := b+"n0", b+"n1"
	node := func(prefix, n string, hsn bool) map[string][]string {
		m := map[string][]string{prefix + n + "/Processors": ids(n, "p", 2), prefix + n + "/Memory": ids(n, "d", 4)}
		if hsn {
			m[prefix+n+"/NodeHsnNics"] = []string{n + "h0"}
		}
		return m
	}
	with := func(ms ...map[string][]string) map[string][]string {
		out := map[string][]string{}
		for _, m := range ms {
			maps.Copy(out, m)
		}
		return out
	}
	type shape = map[string][]string
	for _, tc := range []struct {
		path, xname, format string
		want                shape
	}{
		{path: n0, xname: n0, format: "NestNodesOnly", want: with(shape{"Nodes": {n0}}, node("Nodes/", n0, true))},
		{path: "X3000c0s2b0n0?format=fullyflat", xname: n0, format: "FullyFlat",
			want: shape{"Nodes": {n0}, "Processors": ids(n0, "p", 2), "Memory": ids(n0, "d", 4), "NodeHsnNics": {n0 + "h0"}}},
		{path: n0 + "p0", xname: n0 + "p0", format: "NestNodesOnly", want: shape{"Processors": {n0 + "p0"}}},
		{path: n0 + "?children=false", xname: n0, format: "NestNodesOnly", want: shape{"Nodes": {n0}}},
		{path: n0 + "p0?parents=true&format=FullyFlat", xname: n0 + "p0", format: "FullyFlat",
			want: shape{"Cabinets": {"x3000"}, "Chassis": {"x3000c0"}, "ComputeModules": {"x3000c0s2"}, "NodeBMCs": {b}, "Nodes": {n0}, "Processors": {n0 + "p0"}}},
		{path: n0 + "p0?parents=true&type=Node&type=Processor", xname: n0 + "p0", format: "NestNodesOnly",
			want: shape{"Nodes": {n0}, "Nodes/" + n0 + "/Processors": {n0 + "p0"}}},
		{path: "s0?type=processor", xname: "s0", format: "NestNodesOnly", want: shape{"Processors": append(ids(n0, "p", 2), ids(n1, "p", 2)...)}},
		{path: "all?type=Node&type=Memory", xname: "all", format: "NestNodesOnly",
			want: shape{"Nodes": {n0, n1}, "Nodes/" + n0 + "/Memory": ids(n0, "d", 4), "Nodes/" + n1 + "/Memory": ids(n1, "d", 4)}},
		{path: "ALL?type=!Memory&type=!Processor&type=!NodeHsnNic&format=FullyFlat", xname: "all", format: "FullyFlat",
			want: shape{"Cabinets": {"x3000"}, "Chassis": {"x3000c0"}, "ComputeModules": {"x3000c0s2"}, "NodeEnclosures": {"x3000c0s2e0"}, "NodeBMCs": {b}, "Nodes": {n0, n1}}},
		{path: "x3000?format=Hierarchical", xname: "x3000", format: "Hierarchical", want: with(shape{
			"Cabinets": {"x3000"}, "Cabinets/x3000/Chassis": {"x3000c0"}, "Cabinets/x3000/Chassis/x3000c0/ComputeModules": {"x3000c0s2"},
			"Cabinets/x3000/Chassis/x3000c0/ComputeModules/x3000c0s2/NodeEnclosures": {"x3000c0s2e0"},
			"NodeBMCs": {b}, "Nodes": {n0, n1}}, node("Nodes/", n0, true), node("Nodes/", n1, false))},
		{path: "x3000c0?format=Hierarchical&type=ComputeModule&type=NodeEnclosure", xname: "x3000c0", format: "Hierarchical",
			want: shape{"ComputeModules": {"x3000c0s2"}, "ComputeModules/x3000c0s2/NodeEnclosures": {"x3000c0s2e0"}}},
		{path: "p1", xname: "p1", format: "NestNodesOnly", want: with(shape{"Nodes": {n1}}, node("Nodes/", n1, false))},
		{path: "p1?children=false", xname: "p1", format: "NestNodesOnly", want: shape{"Nodes": {n1}}},
		{path: "all?partition=p1&type=Memory", xname: "all", format: "NestNodesOnly", want: shape{"Memory": ids(n1, "d", 4)}},
		{path: b + "?partition=P1&type=Node", xname: b, format: "NestNodesOnly", want: shape{"Nodes": {n1}}},
	} {
		t.Run(tc.path, func(t *testing.T) {
			xn, format, got := hwShape(t, e.Must(200, "GET", "/Inventory/Hardware/Query/"+tc.path, nil))
			if xn != tc.xname || format != tc.format {
				t.Errorf("XName %q, Format %q; want %q, %q", xn, format, tc.xname, tc.format)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	for _, tc := range []struct {
		path   string
		status int
		detail string
	}{
		{path: "x3000c9", status: 400, detail: `xname: "x3000c9"`},
		{path: "all?format=Nested", status: 400, detail: "query parameter format"},
		{path: "all?format=FullyFlat&format=Hierarchical", status: 400, detail: "query parameter format"},
		{path: "all?children=maybe", status: 400, detail: "query parameter children"},
		{path: "all?parents=2", status: 400, detail: "query parameter parents"},
		{path: "all?partition=x3000", status: 400, detail: "query parameter partition"},
		{path: "all?type=Blade", status: 400, detail: "query parameter type"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			wantProblem(t, e, "GET", "/Inventory/Hardware/Query/"+tc.path, tc.status, tc.detail)
		})
	}
	// Selecting nothing is 200 with no arrays, as in the shipped HSM; an
	// xname= parameter (clients send it) is ignored.
	for path, want := range map[string]string{
		"x3000c0s3b0n0":              `{"XName":"x3000c0s3b0n0","Format":"NestNodesOnly"}`,
		"p2":                         `{"XName":"p2","Format":"NestNodesOnly"}`,
		"all?partition=p2":           `{"XName":"all","Format":"NestNodesOnly"}`,
		n0 + "?type=Cabinet":         `{"XName":"` + n0 + `","Format":"NestNodesOnly"}`,
		n0 + "p0?xname=" + n0 + "p0": `{"XName":"` + n0 + `p0","Format":"NestNodesOnly","Processors":[`,
	} {
		if got := string(e.Must(200, "GET", "/Inventory/Hardware/Query/"+path, nil)); !strings.HasPrefix(got, want) {
			t.Errorf("GET Query/%s: %s, want %s...", path, got, want)
		}
	}
}
