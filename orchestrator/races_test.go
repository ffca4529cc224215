package orchestrator

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// patch sends PATCH path body and fails the test unless it is 200.
func (e *env) patch(path, body string) {
	e.t.Helper()
	if code := e.call("PATCH", path, body, nil); code != 200 {
		e.t.Errorf("PATCH %s %s: %d", path, body, code)
	}
}

// TestPatchDuringPowerOnKept: an administrator disables a node while the
// power-on operator waits for PCS; the pass does not record its action over
// the PATCH (it used to write powering_on and count the attempt).
func TestPatchDuringPowerOnKept(t *testing.T) {
	e := newEnv(t, n1, n2)
	e.template("t1", "img1", n1, n2)
	e.session(`{"name":"s1","operation":"boot","template_name":"t1"}`)
	e.cluster.arm("transition", func() { e.patch("/v2/components/"+n1, `{"enabled":false,"status":{"phase":""}}`) })
	e.reconcile()
	c := e.component(n1)
	if c.Enabled || c.Status.Phase != PhaseNone || c.LastAction.Action != ActionSessionSetup || c.EventStats.PowerOnAttempts != 0 {
		t.Errorf("n1 after a PATCH during the power-on: %+v", c)
	}
	if got := e.component(n2).Status.Status; got != StatusPowerOnCalled {
		t.Errorf("n2 status %q, want %q", got, StatusPowerOnCalled)
	}
}

// TestPatchDuringObserveKept: a PATCH while the status operator reads the
// peers is not overwritten by a decision made from the earlier read (the
// disabled node used to be moved to powering_on, then left there).
func TestPatchDuringObserveKept(t *testing.T) {
	e := newEnv(t, n1, n2)
	e.template("t1", "img1", n1, n2)
	e.session(`{"name":"s1","operation":"boot","template_name":"t1"}`)
	e.cluster.arm("power-status", func() { e.patch("/v2/components/"+n1, `{"enabled":false}`) })
	e.reconcile()
	if c := e.component(n1); c.Enabled || c.Status.Phase != PhaseNone {
		t.Errorf("n1 after a PATCH during the status read: %+v", c)
	}
	if calls := e.cluster.takeCalls(); slices.ContainsFunc(calls, func(s string) bool { return strings.Contains(s, n1) }) {
		t.Errorf("the pass acted on the disabled node: %v", calls)
	}
	// The next pass decides afresh: n2 boots, the disabled n1 stays put.
	e.clock.Advance(10 * time.Second)
	e.reconcile()
	if got := e.statuses(n1, n2); !slices.Equal(got, []string{StatusStable, StatusStable}) || e.component(n1).Enabled {
		t.Errorf("statuses after the next pass: %v", got)
	}
}

// TestSessionPatchDuringSetupKept: a PATCH of a session while its setup
// reads HSM survives the setup's write (it used to write back its copy).
func TestSessionPatchDuringSetupKept(t *testing.T) {
	e := newEnv(t, n1)
	e.template("t1", "img1", n1)
	e.session(`{"name":"s1","operation":"boot","template_name":"t1"}`)
	e.cluster.arm("hsm-query", func() { e.patch("/v2/sessions/s1", `{"status":{"error":"noted by hand"}}`) })
	e.reconcile()
	s := e.sessionState("s1")
	if s.Status.Status != SessionRunning || s.Components != n1 || s.Status.Error == nil || *s.Status.Error != "noted by hand" {
		t.Errorf("session after a PATCH during setup: %+v (error %v)", s, s.Status.Error)
	}
}

// TestSetupRetriesWhileHSMDown: a session whose setup cannot read HSM stays
// pending and is set up again after a growing backoff, not completed with
// the error; once HSM answers it runs.
func TestSetupRetriesWhileHSMDown(t *testing.T) {
	e := newEnv(t, n1)
	e.template("t1", "img1", n1)
	e.session(`{"name":"s1","operation":"boot","template_name":"t1"}`)
	e.cluster.mu.Lock()
	e.cluster.hsmDown, e.cluster.queries = true, 0
	e.cluster.mu.Unlock()
	queries := func() int { e.cluster.mu.Lock(); defer e.cluster.mu.Unlock(); return e.cluster.queries }
	steps := []struct {
		advance time.Duration
		queries int // HSM queries so far: one per setup attempt
	}{
		{advance: 0, queries: 1},
		{advance: time.Second, queries: 1}, // backoff 2 s not over
		{advance: time.Second, queries: 2}, // retried; next backoff 4 s
		{advance: 3 * time.Second, queries: 2},
		{advance: time.Second, queries: 3},
	}
	for i, st := range steps {
		e.clock.Advance(st.advance)
		e.reconcile()
		if got := queries(); got != st.queries {
			t.Fatalf("step %d: %d HSM queries, want %d", i, got, st.queries)
		}
		if s := e.sessionState("s1"); s.Status.Status != SessionPending || s.Status.Error != nil {
			t.Fatalf("step %d: session %+v while HSM is down, want pending", i, s.Status)
		}
	}
	e.cluster.mu.Lock()
	e.cluster.hsmDown = false
	e.cluster.mu.Unlock()
	e.clock.Advance(8 * time.Second)
	e.reconcile()
	if s := e.sessionState("s1"); s.Status.Status != SessionRunning {
		t.Errorf("session after HSM is back: %+v", s.Status)
	}
	if got := e.component(n1).Status.Status; got != StatusPowerOnCalled {
		t.Errorf("n1 %q, want %q", got, StatusPowerOnCalled)
	}
}

// TestSetupFailsWhenTemplateGone: a session that cannot run (its template
// deleted before setup) completes with the error at once.
func TestSetupFailsWhenTemplateGone(t *testing.T) {
	e := newEnv(t, n1)
	e.template("t1", "img1", n1)
	e.session(`{"name":"s1","operation":"boot","template_name":"t1"}`)
	if code := e.call("DELETE", "/v2/sessiontemplates/t1", nil, nil); code != 204 {
		t.Fatalf("DELETE template: %d", code)
	}
	e.reconcile()
	s := e.sessionState("s1")
	if s.Status.Status != SessionComplete || s.Status.Error == nil || !strings.Contains(*s.Status.Error, "t1") {
		t.Errorf("session %+v, want complete with the error", s.Status)
	}
}
