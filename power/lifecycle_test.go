package power

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/power/pcs"
)

// TestRestartResumes: pcs stopped while a task waits for its BMC resumes
// the transition on the next start and completes it, without sending the
// reset again. The BMC would take an hour to power off; while pcs is
// down, its power button does it.
func TestRestartResumes(t *testing.T) { pg.EachDB(t, testRestartResumes) }

func testRestartResumes(t *testing.T, db testpeer.DB) {
	e := newEnvOn(t, db, 1, map[int]redfishsim.Faults{0: {PowerDelay: time.Hour}})
	n := e.node(0)
	code, b := e.call("POST", "/transitions", map[string]any{"operation": "force-off", "taskDeadlineMinutes": 10, "location": locs(n)})
	if code != 200 {
		t.Fatalf("POST: %d %s", code, b)
	}
	var created struct{ TransitionID string }
	_ = json.Unmarshal(b, &created)
	e.events.wait(t, func(ev Event) bool {
		return ev.Kind == EventTask && ev.ID == created.TransitionID && ev.Description == "Confirming successful transition, forceoff"
	})
	e.stopPCS()
	bmc := e.fleet.Members()[0].BMC
	if n := bmc.Stats().Resets["ForceOff"]; n != 1 {
		t.Fatalf("before the restart the BMC got %d ForceOff resets, want 1", n)
	}
	if err := bmc.SetFaults(redfishsim.Faults{}); err != nil {
		t.Fatal(err)
	}
	if err := bmc.Reset("/redfish/v1/Systems/Node0", "ForceOff"); err != nil {
		t.Fatal(err)
	}
	e.startPCS()
	if err := e.daemon.Service().Wait(t.Context(), created.TransitionID); err != nil {
		t.Fatal(err)
	}
	tr := e.get(created.TransitionID)
	if got := tasks(tr)[n]; tr.Status != pcs.TransitionCompleted || got.Status != pcs.TaskSucceeded || got.Description != "Transition confirmed, forceoff" {
		t.Fatalf("after restart: %s %+v", tr.Status, got)
	}
	// The restarted pcs only confirms: the reset it had sent is not sent again.
	if n := bmc.Stats().Resets; len(n) != 1 || n["ForceOff"] != 1 {
		t.Errorf("the restarted pcs sent a reset again: %v, want ForceOff once", n)
	}
}

// TestAbort: tasks not yet sent to a BMC fail as aborted; a completed
// transition cannot be aborted.
func TestAbort(t *testing.T) {
	slow := redfishsim.Faults{Latency: 5 * time.Second}
	e := newEnv(t, 2, nil)
	for _, m := range e.fleet.Members() {
		_ = m.BMC.SetFaults(slow)
	}
	code, b := e.call("POST", "/transitions", map[string]any{"operation": "off", "location": locs(e.node(0), e.node(1))})
	if code != 200 {
		t.Fatalf("POST: %d %s", code, b)
	}
	var created struct{ TransitionID string }
	_ = json.Unmarshal(b, &created)
	if code, b := e.call("DELETE", "/transitions/"+created.TransitionID, nil); code != 202 || !strings.Contains(string(b), "Accepted - abort initiated") {
		t.Fatalf("DELETE: %d %s", code, b)
	}
	if err := e.daemon.Service().Wait(t.Context(), created.TransitionID); err != nil {
		t.Fatal(err)
	}
	tr := e.get(created.TransitionID)
	if tr.Status != pcs.TransitionAborted || tr.Counts != (pcs.TaskCounts{Total: 2, Failed: 2}) {
		t.Fatalf("aborted: %s %+v", tr.Status, tr.Counts)
	}
	for _, task := range tr.Tasks {
		if task.Error != "Transition aborted" || !strings.HasPrefix(task.Description, "Aborted. Last status - ") {
			t.Errorf("task %+v", task)
		}
	}
	for i := range 2 {
		_ = e.fleet.Members()[i].BMC.SetFaults(redfishsim.Faults{})
		if st := systemPower(t, e, i); st != "On" {
			t.Errorf("BMC %d: %s after abort", i, st)
		}
	}
	done := e.transition("on", 1, locs(e.node(0))...)
	if code, b := e.call("DELETE", "/transitions/"+done.TransitionID, nil); code != 400 || !strings.Contains(string(b), "already finished") {
		t.Errorf("abort completed: %d %s", code, b)
	}
}

// TestPowerStatus: the cache answers after sampling and after
// transitions, with PCS's filters and not-found entries.
func TestPowerStatus(t *testing.T) {
	e := newEnv(t, 2, nil)
	if err := e.daemon.Service().Sample(t.Context()); err != nil {
		t.Fatal(err)
	}
	e.wantMetrics("pcs_power_status_sample_seconds_count ", "pcs_power_status_cache_age_seconds ", "pcs_power_status_components ")
	e.transition("force-off", 1, locs(e.node(1))...)
	var got struct{ Status []pcs.PowerStatus }
	code, b := e.call("GET", "/power-status?powerStateFilter=Off", nil)
	if code != 200 || json.Unmarshal(b, &got) != nil || len(got.Status) != 1 || got.Status[0].Xname != e.node(1) {
		t.Fatalf("off filter: %d %s", code, b)
	}
	want := []string{"On", "Force-Off", "Soft-Off", "Off", "Soft-Restart", "Init", "Hard-Restart"}
	if diff := cmp.Diff(want, got.Status[0].Supported); diff != "" {
		t.Errorf("supported (-want +got):\n%s", diff)
	}
	code, b = e.call("POST", "/v1/power-status", map[string]any{"xname": []string{e.node(0), "x9000c0s0b0n0", "x9000c0s0b0n0p0"}})
	if code != 200 || json.Unmarshal(b, &got) != nil || len(got.Status) != 3 {
		t.Fatalf("by xname: %d %s", code, b)
	}
	if got.Status[0].PowerState != pcs.PowerOn || got.Status[1].Error != "Component not found in component map." ||
		got.Status[2].Error != "Component can not have power state and managment state data" {
		t.Errorf("entries: %+v", got.Status)
	}
	for _, q := range []string{"?powerStateFilter=sideways", "?managementStateFilter=undefined", "?xname=bad1"} {
		if code, _ := e.call("GET", "/power-status"+q, nil); code != 400 {
			t.Errorf("GET /power-status%s: %d, want 400", q, code)
		}
	}
}

// TestCAPMC: xname_off and xname_on run transitions; get_xname_status
// reads the cache or HSM; errors are CAPMC bodies.
func TestCAPMC(t *testing.T) {
	e := newEnv(t, 2, nil)
	n0, n1 := e.node(0), e.node(1)
	_ = e.fleet.Members()[1].BMC.SetFaults(redfishsim.Faults{ErrorRate: 1})
	code, b := e.call("POST", "/capmc/v1/xname_off", map[string]any{"xnames": []string{n0, n1}, "force": true})
	var rsp capmcResponse
	if code != 200 || json.Unmarshal(b, &rsp) != nil || rsp.E != -1 || len(rsp.Xnames) != 1 || rsp.Xnames[0].Xname != n1 {
		t.Fatalf("xname_off: %d %s", code, b)
	}
	code, b = e.call("POST", "/capmc/v1/get_xname_status", map[string]any{"xnames": []string{n0}})
	if code != 200 || !strings.Contains(string(b), `"off":["`+n0+`"]`) {
		t.Errorf("get_xname_status: %d %s", code, b)
	}
	code, b = e.call("POST", "/capmc/v1/get_xname_status", map[string]any{"xnames": []string{n0}, "source": "hsm", "filter": "show_off"})
	if code != 200 || !strings.Contains(string(b), `"off":["`+n0+`"]`) {
		t.Errorf("get_xname_status hsm: %d %s", code, b)
	}
	code, b = e.call("POST", "/capmc/v1/xname_on", map[string]any{"xnames": []string{n0}})
	if code != 200 || string(b) != "{\"e\":0,\"err_msg\":\"\"}\n" {
		t.Errorf("xname_on: %d %s", code, b)
	}
	code, b = e.call("POST", "/capmc/v1/xname_on", map[string]any{"xnames": []string{}})
	if code != 400 || !strings.Contains(string(b), `"e":400`) {
		t.Errorf("empty xnames: %d %s", code, b)
	}
}
