package orchestrator

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/testpeer"
)

const (
	n1 = "x3000c0s1b0n0"
	n2 = "x3000c0s2b0n0"
)

func (e *env) session(body string) {
	e.t.Helper()
	if code := e.call("POST", "/v2/sessions", body, nil); code != 201 {
		e.t.Fatalf("POST session %s: %d", body, code)
	}
}

func (e *env) sessionState(name string) Session {
	e.t.Helper()
	var s Session
	if code := e.call("GET", "/v2/sessions/"+name, nil, &s); code != 200 {
		e.t.Fatalf("GET session %s: %d", name, code)
	}
	return s
}

func (e *env) statuses(ids ...string) []string {
	var out []string
	for _, id := range ids {
		out = append(out, e.component(id).Status.Status)
	}
	return out
}

func (e *env) wantStatuses(step string, want ...string) {
	e.t.Helper()
	if d := cmp.Diff(want, e.statuses(n1, n2)); d != "" {
		e.t.Errorf("%s: statuses (-want +got):\n%s", step, d)
	}
}

func TestBootSession(t *testing.T) { pg.EachDB(t, testBootSession) }

func testBootSession(t *testing.T, db testpeer.DB) {
	e := newEnvOn(t, db, nil, n1, n2)
	e.template("t1", "img1", n1, n2)
	e.session(`{"name":"s1","operation":"boot","template_name":"t1"}`)
	e.reconcile()
	e.wantStatuses("after power-on", StatusPowerOnCalled, StatusPowerOnCalled)
	if got := e.sessionState("s1"); got.Status.Status != SessionRunning || got.Components != n1+","+n2 {
		t.Errorf("session after setup: %+v", got)
	}
	if d := cmp.Diff([]string{"BSS PUT " + n1 + "," + n2, "PCS On " + n1 + "," + n2}, e.cluster.takeCalls()); d != "" {
		t.Errorf("calls (-want +got):\n%s", d)
	}
	bp := e.cluster.params[n1]
	wantParams := "console=ttyS0 root=sbps:s3://boot-images/img1/rootfs:e1:sbps:v1:x bos_session_id=s1"
	if bp.Kernel != "s3://boot-images/img1/kernel" || bp.Initrd != "s3://boot-images/img1/initrd" || bp.Params != wantParams {
		t.Errorf("BSS got %+v", bp)
	}
	e.clock.Advance(20 * time.Second)
	e.reconcile()
	e.wantStatuses("after boot", StatusStable, StatusStable)
	c := e.component(n1)
	if c.Enabled || c.ActualState.BSSToken != "token-1" || c.DesiredState.BSSToken != "token-1" ||
		c.ActualState.BootArtifacts != c.DesiredState.BootArtifacts || c.Session != "s1" {
		t.Errorf("component after boot: %+v", c)
	}
	s := e.sessionState("s1")
	if s.Status.Status != SessionComplete || s.Status.EndTime == nil || *s.Status.EndTime != "2026-11-24T12:00:20Z" || s.Status.Error != nil {
		t.Errorf("session: %+v", s.Status)
	}
	var st ExtendedStatus
	e.call("GET", "/v2/sessions/s1/status", nil, &st)
	if st.PercentSuccessful != 100 || st.Phases.PercentComplete != 100 || st.ManagedComponentsCount != 2 || st.Timing.Duration != "0:00:20" {
		t.Errorf("extended status: %+v", st)
	}
	// A second boot of the same image finds the nodes running it: no action.
	e.session(`{"name":"s2","operation":"boot","template_name":"t1"}`)
	e.reconcile()
	if calls := e.cluster.takeCalls(); len(calls) != 0 {
		t.Errorf("boot of the running image acted: %v", calls)
	}
	if s := e.sessionState("s2"); s.Status.Status != SessionComplete {
		t.Errorf("s2: %+v", s.Status)
	}
}

// TestRebootForceful: a reboot whose node 2's BMC ignores the graceful
// shutdown goes through the forceful power-off after max_power_off_wait_time.
func TestRebootForceful(t *testing.T) {
	e := newEnv(t, n1, n2)
	for _, id := range []string{n1, n2} {
		e.cluster.set(id, func(n *simNode) { n.on, n.comp.State = true, "Ready" })
	}
	e.cluster.set(n2, func(n *simNode) { n.ignoreGraceful = true })
	e.template("t1", "img1", n1, n2)
	e.session(`{"name":"r1","operation":"reboot","template_name":"t1"}`)
	e.reconcile()
	e.wantStatuses("after graceful", StatusPowerOffGracefullyCalled, StatusPowerOffGracefullyCalled)
	e.clock.Advance(10 * time.Second)
	e.reconcile()
	e.wantStatuses("n1 off", StatusPowerOnCalled, StatusPowerOffGracefullyCalled)
	e.clock.Advance(300 * time.Second)
	e.reconcile()
	e.wantStatuses("forceful", StatusStable, StatusPowerOffForcefullyCalled)
	e.clock.Advance(10 * time.Second)
	e.reconcile()
	e.wantStatuses("n2 on", StatusStable, StatusPowerOnCalled)
	e.clock.Advance(10 * time.Second)
	e.reconcile()
	e.wantStatuses("done", StatusStable, StatusStable)
	want := []string{"PCS Soft-Off " + n1 + "," + n2, "BSS PUT " + n1, "PCS On " + n1, "PCS Force-Off " + n2,
		"BSS PUT " + n2, "PCS On " + n2}
	if d := cmp.Diff(want, e.cluster.takeCalls()); d != "" {
		t.Errorf("calls (-want +got):\n%s", d)
	}
	if c := e.component(n2); c.EventStats != (EventStats{}) || c.Enabled {
		t.Errorf("n2 after reboot: %+v", c)
	}
	if s := e.sessionState("r1"); s.Status.Status != SessionComplete {
		t.Errorf("r1: %+v", s.Status)
	}
}

func TestShutdownSession(t *testing.T) {
	e := newEnv(t, n1, n2)
	e.cluster.set(n1, func(n *simNode) { n.on, n.comp.State = true, "Ready" })
	e.template("t1", "img1", n1, n2)
	e.session(`{"name":"off","operation":"shutdown","template_name":"t1"}`)
	e.reconcile()
	e.wantStatuses("graceful", StatusPowerOffGracefullyCalled, StatusStable)
	e.reconcile()
	e.wantStatuses("off", StatusStable, StatusStable)
	if d := cmp.Diff([]string{"PCS Soft-Off " + n1}, e.cluster.takeCalls()); d != "" {
		t.Errorf("calls (-want +got):\n%s", d)
	}
	if c := e.component(n1); c.DesiredState.BootArtifacts != (BootArtifacts{}) || c.Enabled {
		t.Errorf("n1: %+v", c)
	}
	if s := e.sessionState("off"); s.Status.Status != SessionComplete {
		t.Errorf("session: %+v", s.Status)
	}
}

// TestDeadBMC: a node whose BMC never answers ends failed, with its error,
// after the retries; the other node of the session is unaffected; a
// restart of bos midway changes nothing.
func TestDeadBMC(t *testing.T) {
	e := newEnv(t, n1, n2)
	e.cluster.set(n2, func(n *simNode) { n.dead = true })
	e.template("t1", "img1", n1, n2)
	e.session(`{"name":"s1","operation":"boot","template_name":"t1"}`)
	e.reconcile()
	e.restart()
	e.reconcile()
	e.wantStatuses("first attempt", StatusStable, StatusPowerOnCalled)
	for i := 0; i < 3; i++ {
		e.clock.Advance(120 * time.Second)
		e.reconcile()
	}
	e.wantStatuses("retries spent", StatusStable, StatusFailed)
	c := e.component(n2)
	if c.Enabled || c.EventStats.PowerOnAttempts != 3 || !strings.Contains(c.Error, "BMC not reachable") ||
		!strings.HasPrefix(c.Error, "failed to power on after 3 attempts") || !c.LastAction.Failed {
		t.Errorf("n2: %+v", c)
	}
	var st ExtendedStatus
	e.call("GET", "/v2/sessions/s1/status", nil, &st)
	if st.Status != SessionComplete || st.PercentFailed != 50 || st.PercentSuccessful != 50 || st.ErrorSummary[c.Error].List != n2 {
		t.Errorf("extended status: %+v", st)
	}
}

func TestStagedSession(t *testing.T) {
	e := newEnv(t, n1, n2)
	e.template("t1", "img2", n1, n2)
	e.session(`{"name":"st","operation":"reboot","template_name":"t1","stage":true}`)
	e.reconcile()
	if calls := e.cluster.takeCalls(); len(calls) != 0 {
		t.Errorf("a staged session acted: %v", calls)
	}
	var comps []Component
	e.call("GET", "/v2/components?staged_session=st", nil, &comps)
	if len(comps) != 2 || comps[0].StagedState.BootArtifacts.Kernel != "s3://boot-images/img2/kernel" || comps[0].Enabled {
		t.Fatalf("staged components: %+v", comps)
	}
	var res ApplyStagedResult
	if code := e.call("POST", "/v2/applystaged", `{"xnames":["`+n1+`","x9c0s0b0n0"]}`, &res); code != 200 {
		t.Fatalf("applystaged: %d", code)
	}
	if d := cmp.Diff(ApplyStagedResult{Succeeded: []string{n1}, Failed: []string{"x9c0s0b0n0"}, Ignored: []string{}}, res); d != "" {
		t.Errorf("applystaged (-want +got):\n%s", d)
	}
	if s := e.sessionState("st"); s.Status.Status != SessionRunning || s.Status.EndTime != nil {
		t.Errorf("staged session after applystaged: %+v", s.Status)
	}
	e.reconcile()
	e.clock.Advance(10 * time.Second)
	e.reconcile()
	e.wantStatuses("applied", StatusStable, StatusStable)
	if s := e.sessionState("st"); s.Status.Status != SessionComplete {
		t.Errorf("staged session at the end: %+v", s.Status)
	}
	if calls := e.cluster.takeCalls(); !slices.Equal(calls, []string{"BSS PUT " + n1, "PCS On " + n1}) {
		t.Errorf("calls: %v", calls)
	}
	if c := e.component(n1); c.ActualState.BootArtifacts.Kernel != "s3://boot-images/img2/kernel" {
		t.Errorf("n1: %+v", c)
	}
}

func TestLimitAndDisabled(t *testing.T) {
	e := newEnv(t, n1, n2, "x3000c0s3b0n0")
	e.cluster.set("x3000c0s3b0n0", func(n *simNode) { n.comp.Enabled = new(false) })
	e.cluster.groups["blue"] = []string{n1, n2}
	body := `{"boot_sets":{"c":{"path":"` + e.cluster.manifestURL("img1") + `","type":"s3","node_roles_groups":["Compute"]}}}`
	if code := e.call("PUT", "/v2/sessiontemplates/roles", body, nil); code != 200 {
		t.Fatal(code)
	}
	e.session(`{"name":"lim","operation":"boot","template_name":"roles","limit":"blue,!` + n2 + `"}`)
	e.session(`{"name":"all","operation":"boot","template_name":"roles"}`)
	e.reconcile()
	if s := e.sessionState("lim"); s.Components != n1 {
		t.Errorf("limited session components %q", s.Components)
	}
	if s := e.sessionState("all"); s.Components != n1+","+n2 {
		t.Errorf("session without disabled nodes: %q", s.Components)
	}
}
