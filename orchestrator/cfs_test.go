package orchestrator

import (
	"strings"
	"testing"
	"time"
)

// TestConfiguration: a template with enable_cfs and a configuration has
// bos set the nodes' desired configuration in CFS before powering them on;
// booted, they stay configuring until CFS reports: n1 configured ends
// stable, n2 failed ends failed naming the configuration; the session
// completes.
func TestConfiguration(t *testing.T) {
	e := newEnv(t, n1, n2)
	body := `{"enable_cfs":true,"cfs":{"configuration":"site-1.0"},"boot_sets":{"c":{"path":"` +
		e.cluster.manifestURL("img1") + `","type":"s3","node_list":["` + n1 + `","` + n2 + `"]}}}`
	if code := e.call("PUT", "/v2/sessiontemplates/t1", body, nil); code != 200 {
		t.Fatal(code)
	}
	e.session(`{"name":"s1","operation":"boot","template_name":"t1"}`)
	e.reconcile()
	e.cluster.mu.Lock()
	sets, got := e.cluster.cfsSets, e.cluster.cfs[n1]
	e.cluster.mu.Unlock()
	if sets != 1 || got == nil || got.DesiredConfig != "site-1.0" || got.Enabled == nil || !*got.Enabled {
		t.Fatalf("CFS after the first pass: %d PATCHes, %s %+v", sets, n1, got)
	}
	e.wantStatuses("powered on", StatusPowerOnCalled, StatusPowerOnCalled)
	if c := e.component(n1); c.DesiredState.Configuration != "site-1.0" {
		t.Errorf("desired configuration %q", c.DesiredState.Configuration)
	}
	e.clock.Advance(20 * time.Second)
	e.reconcile()
	e.wantStatuses("booted, CFS pending", StatusConfiguring, StatusConfiguring)
	e.cluster.mu.Lock()
	e.cluster.cfs[n1].ConfigurationStatus = CFSConfigured
	e.cluster.cfs[n2].ConfigurationStatus = CFSFailed
	sets = e.cluster.cfsSets
	e.cluster.mu.Unlock()
	if sets != 1 {
		t.Errorf("%d CFS PATCHes, want the one (CFS held the configuration since)", sets)
	}
	e.clock.Advance(20 * time.Second)
	e.reconcile()
	e.wantStatuses("CFS done", StatusStable, StatusFailed)
	if c := e.component(n2); c.Enabled || !strings.Contains(c.Error, "site-1.0") {
		t.Errorf("n2: %+v", c)
	}
	if s := e.sessionState("s1"); s.Status.Status != SessionComplete {
		t.Errorf("session %+v", s.Status)
	}
}

// TestNoCFSSkipsConfiguration: without -cfs-url a template's configuration
// is not applied and a node that boots its image is done.
func TestNoCFSSkipsConfiguration(t *testing.T) {
	e := newEnv(t, n1)
	e.daemon.svc.cfs = nil
	body := `{"cfs":{"configuration":"site-1.0"},"boot_sets":{"c":{"path":"` + e.cluster.manifestURL("img1") +
		`","type":"s3","node_list":["` + n1 + `"]}}}`
	if code := e.call("PUT", "/v2/sessiontemplates/t1", body, nil); code != 200 {
		t.Fatal(code)
	}
	e.session(`{"name":"s1","operation":"boot","template_name":"t1"}`)
	e.reconcile()
	e.clock.Advance(20 * time.Second)
	e.reconcile()
	if got := e.component(n1).Status.Status; got != StatusStable {
		t.Errorf("n1 %q, want stable", got)
	}
	if e.cluster.cfsSets != 0 {
		t.Errorf("%d CFS PATCHes without a CFS", e.cluster.cfsSets)
	}
}
