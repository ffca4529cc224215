package statemgr

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/internal/sqldb"
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

// discoveredEnv is an API whose inventory comes from discovering a simulated
// BMC bmcX with two nodes.
func discoveredEnv(t *testing.T, bmcX string) *rfEnv {
	t.Helper()
	e := newRFEnv(t, DiscoveryConfig{})
	e.bmc(bmcX, 2, redfishsim.Faults{})
	e.must(201, "POST", "/Inventory/RedfishEndpoints", RedfishEndpoint{ID: bmcX, User: "root", Password: rfPassword, RediscoverOnUpdate: true})
	e.waitDiscovered(bmcX)
	return e
}

// TestInventoryFilters checks the ComponentEndpoints and Hardware filters
// and deletes after a real discovery.
func TestInventoryFilters(t *testing.T) {
	const bmcX = "x3000c0s2b0"
	e := discoveredEnv(t, bmcX)
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

// rfEnvAt is an API with discovery over the store at path, on clock now
// (nil: the real one).
func rfEnvAt(t *testing.T, path string, now func() time.Time) *rfEnv {
	t.Helper()
	s, err := OpenStore(t.Context(), path, now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	creds, err := LoadCredKey(filepath.Join(t.TempDir(), "cred.key"))
	if err != nil {
		t.Fatal(err)
	}
	return newRFEnvOver(t, s, NewDiscovery(s, creds, DiscoveryConfig{}))
}

// histEnv is an API whose store runs on a settable clock, with three walks of
// x3000c0s1b0 an hour apart: p0 holds CPU-A, then CPU-B; p1 holds CPU-C,
// then CPU-A.
func histEnv(t *testing.T) (*rfEnv, []time.Time) {
	t.Helper()
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	e := rfEnvAt(t, filepath.Join(t.TempDir(), "hsm.db"), clock.now)
	s := e.store
	var times []time.Time
	for _, frus := range [][2]string{{"CPU-A", "CPU-C"}, {"CPU-B", "CPU-C"}, {"CPU-B", "CPU-A"}} {
		times = append(times, clock.now())
		res := &redfish.Result{EndpointID: "x3000c0s1b0"}
		for i, fru := range frus {
			res.HWInventory = append(res.HWInventory, redfish.HWInvByLoc{
				ID: fmt.Sprintf("x3000c0s1b0n0p%d", i), Type: "Processor", Status: "Populated", HWInventoryByLocationType: "HWInvByLocProcessor",
				PopulatedFRU: &redfish.HWInvByFRU{FRUID: fru, Type: "Processor", HWInventoryByFRUType: "HWInvByFRUProcessor",
					ProcessorFRUInfo: &redfish.ProcessorFRUInfo{Manufacturer: "Intel", SerialNumber: "SN-" + fru}},
			})
		}
		if err := s.putInventory(t.Context(), res); err != nil {
			t.Fatal(err)
		}
		clock.add(time.Hour)
	}
	return e, times
}

// TestHardwareHistoryFilters checks id, fruid, eventtype and the
// starttime/endtime window on both history collections and their /{key}
// forms, and that unknown or malformed filters are refused naming them.
func TestHardwareHistoryFilters(t *testing.T) {
	e, ts := histEnv(t)
	const p0, p1 = "x3000c0s1b0n0p0", "x3000c0s1b0n0p1"
	ev := func(id, fru, typ string, at int) HWHistory {
		return HWHistory{ID: id, FRUID: fru, EventType: typ, Timestamp: ts[at]}
	}
	var (
		aAdd0, aRem0, bAdd0 = ev(p0, "CPU-A", HWEventAdded, 0), ev(p0, "CPU-A", HWEventRemoved, 1), ev(p0, "CPU-B", HWEventAdded, 1)
		cAdd1, cRem1, aAdd1 = ev(p1, "CPU-C", HWEventAdded, 0), ev(p1, "CPU-C", HWEventRemoved, 2), ev(p1, "CPU-A", HWEventAdded, 2)
	)
	at := func(i int) string { return url.QueryEscape(ts[i].Format(time.RFC3339)) }
	plusOne := url.QueryEscape(ts[1].In(time.FixedZone("", 3600)).Format(time.RFC3339)) // same instant, +01:00
	type arr = HWHistoryArray
	type hs = []HWHistory
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
			body := e.must(200, "GET", tc.path, nil)
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
		{path: "/Inventory/Hardware/History?fruid=CPU-A", status: 400, detail: "fruid"},
		{path: "/Inventory/HardwareByFRU/History?id=" + p0, status: 400, detail: "id"},
		{path: "/Inventory/Hardware/History/" + p0 + "?id=" + p0, status: 400, detail: "id"},
		{path: "/Inventory/HardwareByFRU/History/CPU-A?fruid=CPU-A", status: 400, detail: "fruid"},
		{path: "/Inventory/Hardware/History?color=red", status: 400, detail: "color"},
		{path: "/Inventory/Hardware/History?eventtype=Exploded", status: 400, detail: `eventtype: invalid value "Exploded"`},
		{path: "/Inventory/HardwareByFRU/History?starttime=yesterday", status: 400, detail: "starttime"},
		{path: "/Inventory/Hardware/History/" + p0 + "?endtime=2026-01-01", status: 400, detail: "endtime"},
		{path: "/Inventory/Hardware/History/x3000c0s1b0n0p7", status: 404, detail: "x3000c0s1b0n0p7"},
		{path: "/Inventory/Hardware/History/x3000c0s1b0n0p7?eventtype=Added", status: 404, detail: "x3000c0s1b0n0p7"},
		{path: "/Inventory/HardwareByFRU/History/CPU-Z", status: 404, detail: "CPU-Z"},
	} {
		t.Run(tc.path, func(t *testing.T) { wantProblem(t, e, "GET", tc.path, tc.status, tc.detail) })
	}
}

// wantProblem checks that method path answers status with a problem whose
// detail names detail.
func wantProblem(t *testing.T, e *rfEnv, method, path string, status int, detail string) {
	t.Helper()
	got, body := glDo(t, e.srv, method, path, "")
	var p struct {
		Status int
		Detail string
	}
	if err := json.Unmarshal(body, &p); err != nil || got != status || p.Status != status || !strings.Contains(p.Detail, detail) {
		t.Errorf("%s %s: %d %s, want %d naming %q", method, path, got, body, status, detail)
	}
}

// TestHardwareDeletes: FRUs held by a location cannot be deleted (409, and
// nothing is deleted), free ones can; history deletes by location, by FRU
// and all; each delete of nothing is 404.
func TestHardwareDeletes(t *testing.T) {
	e, _ := histEnv(t)
	const p0, p1 = "x3000c0s1b0n0p0", "x3000c0s1b0n0p1"
	frus := func() int {
		t.Helper()
		var l []json.RawMessage
		if err := json.Unmarshal(e.must(200, "GET", "/Inventory/HardwareByFRU", nil), &l); err != nil {
			t.Fatal(err)
		}
		return len(l)
	}
	deleted := func(path, msg string) {
		t.Helper()
		var got Response
		if err := json.Unmarshal(e.must(200, "DELETE", path, nil), &got); err != nil {
			t.Fatal(err)
		}
		if want := (Response{Code: "0", Message: msg}); got != want {
			t.Errorf("DELETE %s: %+v, want %+v", path, got, want)
		}
	}
	wantProblem(t, e, "DELETE", "/Inventory/HardwareByFRU/CPU-A", 409, p1)
	wantProblem(t, e, "DELETE", "/Inventory/HardwareByFRU", 409, p0)
	if n := frus(); n != 3 {
		t.Fatalf("FRUs after refused deletes: %d, want 3", n)
	}
	deleted("/Inventory/HardwareByFRU/CPU-C", "deleted 1 entry")
	wantProblem(t, e, "GET", "/Inventory/HardwareByFRU/CPU-C", 404, "CPU-C")
	wantProblem(t, e, "DELETE", "/Inventory/HardwareByFRU/CPU-C", 404, "CPU-C")

	deleted("/Inventory/Hardware/History/X3000c0s1b0n0p0", "deleted 3 entries")
	wantProblem(t, e, "GET", "/Inventory/Hardware/History/"+p0, 404, p0)
	wantProblem(t, e, "DELETE", "/Inventory/Hardware/History/"+p0, 404, p0)
	deleted("/Inventory/HardwareByFRU/History/CPU-C", "deleted 2 entries")
	wantProblem(t, e, "DELETE", "/Inventory/HardwareByFRU/History/CPU-C", 404, "CPU-C")
	deleted("/Inventory/Hardware/History", "deleted 1 entry")
	wantProblem(t, e, "DELETE", "/Inventory/Hardware/History", 404, "history")
	if got := string(e.must(200, "GET", "/Inventory/HardwareByFRU/History", nil)); strings.TrimSpace(got) != `{"Components":[]}` {
		t.Errorf("history after deleting all: %s", got)
	}

	// A walk that finds no hardware frees the FRUs.
	if err := e.store.putInventory(t.Context(), &redfish.Result{EndpointID: "x3000c0s1b0"}); err != nil {
		t.Fatal(err)
	}
	deleted("/Inventory/HardwareByFRU", "deleted 2 entries")
	wantProblem(t, e, "DELETE", "/Inventory/HardwareByFRU", 404, "FRUs")
}

// TestFRUFiltersAndServiceEndpointDeletes discovers a simulated BMC, then
// checks every HardwareByFRU filter, the refusal to delete a FRU a location
// holds, and the ServiceEndpoints deletes.
func TestFRUFiltersAndServiceEndpointDeletes(t *testing.T) {
	const bmcX = "x3000c0s2b0"
	e := discoveredEnv(t, bmcX)
	var cpu []redfish.HWInvByLoc
	if err := json.Unmarshal(e.must(200, "GET", "/Inventory/Hardware?id="+bmcX+"n1p0", nil), &cpu); err != nil || len(cpu) != 1 || cpu[0].PopulatedFRU == nil {
		t.Fatalf("processor n1p0: %v %v", cpu, err)
	}
	fru := cpu[0].PopulatedFRU
	manu, pn, sn := fruIdent(fru)
	var mem []json.RawMessage
	_ = json.Unmarshal(e.must(200, "GET", "/Inventory/Hardware?type=Memory", nil), &mem)
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
		var got []redfish.HWInvByFRU
		if err := json.Unmarshal(e.must(200, "GET", "/Inventory/HardwareByFRU?"+tc.query, nil), &got); err != nil {
			t.Fatal(err)
		}
		if len(got) != tc.want {
			t.Errorf("HardwareByFRU?%s: %d FRUs, want %d", tc.query, len(got), tc.want)
		}
		if tc.want == 1 && got[0].FRUID != fru.FRUID {
			t.Errorf("HardwareByFRU?%s: %s, want %s", tc.query, got[0].FRUID, fru.FRUID)
		}
	}
	wantProblem(t, e, "GET", "/Inventory/HardwareByFRU?color=red", 400, "color")
	wantProblem(t, e, "DELETE", "/Inventory/HardwareByFRU/"+fru.FRUID, 409, bmcX+"n1p0")
	e.must(200, "GET", "/Inventory/HardwareByFRU/"+fru.FRUID, nil)

	var ses struct{ ServiceEndpoints []redfish.ServiceEndpoint }
	if err := json.Unmarshal(e.must(200, "GET", "/Inventory/ServiceEndpoints", nil), &ses); err != nil || len(ses.ServiceEndpoints) < 2 {
		t.Fatalf("service endpoints: %v %v", ses, err)
	}
	one := "/Inventory/ServiceEndpoints/" + ses.ServiceEndpoints[0].RedfishType + "/RedfishEndpoints/" + bmcX
	e.must(200, "DELETE", one, nil)
	wantProblem(t, e, "GET", one, 404, bmcX)
	wantProblem(t, e, "DELETE", one, 404, bmcX)
	wantProblem(t, e, "DELETE", "/Inventory/ServiceEndpoints/"+ses.ServiceEndpoints[1].RedfishType+"/RedfishEndpoints/x9000c0s0b0", 404, "x9000c0s0b0")
	var res Response
	if err := json.Unmarshal(e.must(200, "DELETE", "/Inventory/ServiceEndpoints", nil), &res); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("deleted %d entries", len(ses.ServiceEndpoints)-1)
	if len(ses.ServiceEndpoints)-1 == 1 {
		want = "deleted 1 entry"
	}
	if res.Message != want || res.Code != "0" {
		t.Errorf("DELETE /Inventory/ServiceEndpoints: %+v, want message %q", res, want)
	}
	if got := strings.TrimSpace(string(e.must(200, "GET", "/Inventory/ServiceEndpoints", nil))); got != `{"ServiceEndpoints":[]}` {
		t.Errorf("service endpoints after deleting all: %s", got)
	}
	wantProblem(t, e, "DELETE", "/Inventory/ServiceEndpoints", 404, "service endpoints")
}

// TestFRUColumnsMigrated: FRUs and locations stored before migration 0013
// answer the manufacturer, partnumber and serialnumber filters after it.
func TestFRUColumnsMigrated(t *testing.T) {
	old := fstest.MapFS{}
	files, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if name := filepath.Base(f); name < "0013" {
			b, _ := migrationFiles.ReadFile(f)
			old[name] = &fstest.MapFile{Data: b}
		}
	}
	path := filepath.Join(t.TempDir(), "hsm.db")
	db, err := sqldb.Open(t.Context(), path, old)
	if err != nil {
		t.Fatal(err)
	}
	fru := redfish.HWInvByFRU{FRUID: "MEM-1", Type: "Memory", HWInventoryByFRUType: "HWInvByFRUMemory",
		MemoryFRUInfo: &redfish.MemoryFRUInfo{Manufacturer: "Hynix", PartNumber: "HMA84", SerialNumber: "S-1"}}
	loc := redfish.HWInvByLoc{ID: "x3000c0s1b0n0d0", Type: "Memory", Status: "Populated", HWInventoryByLocationType: "HWInvByLocMemory", PopulatedFRU: &fru}
	fb, _ := json.Marshal(fru)
	lb, _ := json.Marshal(loc)
	bare, _ := json.Marshal(redfish.HWInvByFRU{FRUID: "BARE", Type: "Node", HWInventoryByFRUType: "HWInvByFRUNode"})
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
		if err := json.Unmarshal(e.must(200, "GET", p, nil), &got); err != nil || len(got) != 1 {
			t.Errorf("GET %s: %d entries (%v), want 1", p, len(got), err)
		}
	}
	var got []redfish.HWInvByFRU
	_ = json.Unmarshal(e.must(200, "GET", "/Inventory/HardwareByFRU?serialnumber=", nil), &got)
	if len(got) != 1 || got[0].FRUID != "BARE" {
		t.Errorf("FRUs without serial number: %+v, want BARE", got)
	}
}
