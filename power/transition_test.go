package power

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/power/pcs"
)

// TestTransitionsOffOn: off then on, confirmed by reading the BMCs back,
// with HSM told.
func TestTransitionsOffOn(t *testing.T) {
	e := newEnv(t, 2, nil)
	n0, n1 := e.node(0), e.node(1)
	tr := e.transition("off", 1, locs(n0, n1)...)
	want := pcs.TaskCounts{Total: 2, Succeeded: 2}
	if diff := cmp.Diff(want, tr.Counts); diff != "" || tr.Status != pcs.TransitionCompleted {
		t.Fatalf("off: status %s counts (-want +got):\n%s\n%+v", tr.Status, diff, tr.Tasks)
	}
	if got := tasks(tr)[n0].Description; got != "Transition confirmed, gracefulshutdown" {
		t.Errorf("off description = %q", got)
	}
	c, err := e.hsm.Component(t.Context(), n0)
	if err != nil || c.State != "Off" {
		t.Errorf("HSM state after off: %+v %v", c, err)
	}
	tr = e.transition("On", 1, locs(n0)...)
	if tr.Counts.Succeeded != 1 || tasks(tr)[n0].Description != "Transition confirmed, on" {
		t.Fatalf("on: %+v", tr)
	}
	tr = e.transition("on", 1, locs(n0)...)
	if got := tasks(tr)[n0].Description; got != "Component already in desired state" {
		t.Errorf("second on: %q", got)
	}
}

// TestGracefulIgnoredThenForced: a BMC whose OS ignores GracefulShutdown
// is forced off once the graceful share of the deadline has passed (on
// an injected clock: no waiting for it).
func TestGracefulIgnoredThenForced(t *testing.T) {
	e := newEnv(t, 1, map[int]redfishsim.Faults{0: {IgnoreGraceful: true}})
	e.stopPCS()
	e.clock = &skipClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	e.startPCS()
	tr := e.transition("off", 1, locs(e.node(0))...)
	if got := tasks(tr)[e.node(0)]; got.Status != pcs.TaskSucceeded || got.Description != "Transition confirmed, forceoff" {
		t.Fatalf("task = %+v", got)
	}
}

// TestNoAllowableValues: a BMC that omits its reset types still powers
// on and off (the standard types are tried), and a type it refuses makes
// the task unsupported.
func TestNoAllowableValues(t *testing.T) {
	e := newEnv(t, 1, map[int]redfishsim.Faults{0: {OmitAllowableValues: true}})
	n := e.node(0)
	for _, op := range []string{"force-off", "on", "soft-restart"} {
		if got := tasks(e.transition(op, 1, locs(n)...))[n]; got.Status != pcs.TaskSucceeded {
			t.Fatalf("%s: %+v", op, got)
		}
	}
}

// TestPartialFailure: a hung BMC and a failing one fail only their own
// tasks.
func TestPartialFailure(t *testing.T) {
	e := newEnv(t, 3, nil)
	e.bmcClock = newTimerClock() // -bmc-timeout passes when the test fires it
	e.stopPCS()
	e.startPCS()
	_ = e.fleet.Members()[1].BMC.SetFaults(redfishsim.Faults{Hang: true})
	_ = e.fleet.Members()[2].BMC.SetFaults(redfishsim.Faults{ErrorRate: 1})
	id := e.start("force-off", 1, locs(e.node(0), e.node(1), e.node(2))...)
	for _, i := range []int{0, 2} {
		e.events.wait(t, func(ev Event) bool {
			return ev.Kind == EventTask && ev.ID == id && ev.Xname == e.node(i) && ev.Status != pcs.TaskInProgress
		})
	}
	done := make(chan error, 1)
	go func() { done <- e.daemon.Service().Wait(t.Context(), id) }()
	for waiting := true; waiting; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			waiting = false
		case <-e.bmcClock.fire(): // the hung BMC's request set its timer
		}
	}
	tr := e.get(id)
	got := tasks(tr)
	if got[e.node(0)].Status != pcs.TaskSucceeded || got[e.node(1)].Status != pcs.TaskFailed || got[e.node(2)].Status != pcs.TaskFailed {
		t.Fatalf("tasks = %+v", got)
	}
	if tr.Counts != (pcs.TaskCounts{Total: 3, Succeeded: 1, Failed: 2}) {
		t.Errorf("counts = %+v", tr.Counts)
	}
	e.wantMetrics(`pcs_transitions_total{operation="Force-Off",result="completed"} 1`,
		`pcs_tasks_total{operation="Force-Off",status="failed"} 2`,
		`pcs_tasks_total{operation="Force-Off",status="succeeded"} 1`,
		`pcs_task_duration_seconds_count{operation="Force-Off",status="failed"} 2`,
		`pcs_bmc_request_errors_total{method="GET",reason="timeout"} `,
		`pcs_bmc_request_errors_total{method="GET",reason="status_5xx"} `,
		`pcs_transitions_running 0`)
}

// TestReservations: a component locked by an admin, or reserved by
// another service, is never powered; the holder's deputy key lets the
// transition through.
func TestReservations(t *testing.T) {
	e := newEnv(t, 3, nil)
	ctx := t.Context()
	n0, n1, n2 := e.node(0), e.node(1), e.node(2)
	hsmPost(t, e.hsmURL+"/hsm/v2/locks/lock", `{"ComponentIDs":["`+n0+`"]}`)
	res, err := e.hsm.ReserveService(ctx, []string{n1, n2}, 5)
	if err != nil || len(res.Success) != 2 {
		t.Fatalf("reserve: %+v %v", res, err)
	}
	dk := map[string]string{}
	for _, k := range res.Success {
		dk[k.ID] = k.DeputyKey
	}
	tr := e.transition("force-off", 1, pcs.Location{Xname: n0}, pcs.Location{Xname: n1}, pcs.Location{Xname: n2, DeputyKey: dk[n2]})
	got := tasks(tr)
	if got[n0].Status != pcs.TaskFailed || !strings.HasPrefix(got[n0].Error, "Unable to reserve component") {
		t.Errorf("locked: %+v", got[n0])
	}
	if got[n1].Status != pcs.TaskFailed || !strings.HasPrefix(got[n1].Error, "Unable to reserve component") {
		t.Errorf("reserved by another: %+v", got[n1])
	}
	if got[n2].Status != pcs.TaskSucceeded {
		t.Errorf("deputy key: %+v", got[n2])
	}
	for _, i := range []int{0, 1} {
		if st := systemPower(t, e, i); st != "On" {
			t.Errorf("BMC %d powered: %s", i, st)
		}
	}
}

// TestBadInput: refused whole, naming the offending entries.
func TestBadInput(t *testing.T) {
	e := newEnv(t, 1, nil)
	n := e.node(0)
	for _, tc := range []struct {
		name string
		body any
		want string
	}{
		{name: "operation", body: map[string]any{"operation": "explode"}, want: "invalid pcs.Operation type explode"},
		{name: "xname", body: map[string]any{"operation": "on", "location": locs("bad1", n)}, want: "invalid xnames: bad1"},
		{name: "duplicate", body: map[string]any{"operation": "on", "location": locs(n, n)}, want: "duplicate xnames: " + n},
		{name: "unknown", body: map[string]any{"operation": "on", "location": locs("x9000c0s0b0n0")}, want: "x9000c0s0b0n0"},
		{name: "type", body: map[string]any{"operation": "on", "location": locs(n + "p0")}, want: "no power control for: " + n + "p0 (Processor)"},
		{name: "deadline", body: map[string]any{"operation": "on", "taskDeadlineMinutes": 0, "location": locs(n)}, want: "taskDeadlineMinutes 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, b := e.call("POST", "/transitions", tc.body)
			if code != 400 || !strings.Contains(string(b), tc.want) {
				t.Errorf("%d %s; want 400 naming %q", code, b, tc.want)
			}
		})
	}
	if code, b := e.call("GET", "/transitions/FAKE", nil); code != 400 || !strings.Contains(string(b), "invalid UUID length: 4") {
		t.Errorf("bad id: %d %s", code, b)
	}
	if code, _ := e.call("GET", "/transitions/220a7246-1f01-46ef-8c6e-e61fcfc7bbee", nil); code != 404 {
		t.Errorf("unknown id: %d", code)
	}
	if code, b := e.call("GET", "/transitions", nil); code != 200 || string(b) != "{\"transitions\":[]}\n" {
		t.Errorf("empty list: %d %s", code, b)
	}
}

func hsmPost(t *testing.T, url, body string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("POST %s: %d", url, resp.StatusCode)
	}
}

// systemPower reads BMC i's system PowerState directly.
func systemPower(t *testing.T, e *env, i int) string {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", e.fleet.Members()[i].URL+"/redfish/v1/Systems/Node0", nil)
	req.SetBasicAuth("root", simPassword)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s struct{ PowerState string }
	_ = json.NewDecoder(resp.Body).Decode(&s)
	return s.PowerState
}
