package integration

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/orchestrator"
	"github.com/hmsuite/hms/power"
	"github.com/hmsuite/hms/power/pcs"
)

// TestTransitionEndWakesBos: with its clock stopped, its polls an hour
// apart and HSM's SCNs going elsewhere, bos learns of every power change
// only from the end of the PCS transitions it started. The watcher's timer
// is the test's, fired when pcs ends a transition, so each session moves
// only because bos read that its transition ended: shutdown, boot and
// reboot complete, and a BMC that refuses resets leaves PCS's error on its
// component while the session's other nodes go on.
func TestTransitionEndWakesBos(t *testing.T) {
	tick := make(chan time.Time, 1)
	ended := func(ev power.Event) {
		if ev.Kind == power.EventTransitionDone {
			select {
			case tick <- time.Now():
			default: // a check is due already; it reads every transition
			}
		}
	}
	sink := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(sink.Close)
	stopped := time.Now().UTC().Truncate(time.Second)
	c := newBootClusterWith(t, 3, bootOptions{pcsEvent: ended, syncBoot: true, bos: func(cfg *orchestrator.DaemonConfig) {
		cfg.Now = func() time.Time { return stopped }
		cfg.After = func(time.Duration) <-chan time.Time { return tick }
		cfg.FallbackPoll = time.Hour
		cfg.SCNInURL = sink.URL + "/scn"
	}})
	nodes := c.nodeIDs()
	c.bos("PATCH", "/v2/options", map[string]any{"polling_frequency": 3600, "max_power_off_wait_time": 3600,
		"max_power_on_wait_time": 3600, "max_boot_wait_time": 3600}, nil)
	c.bos("PUT", "/v2/sessiontemplates/compute", map[string]any{"enable_cfs": false, "boot_sets": map[string]any{
		"compute": map[string]any{"path": c.images.URL + "/img1/manifest.json", "type": "s3", "node_list": nodes}}}, nil)

	c.runSession("off", orchestrator.OpShutdown)
	c.runSession("boot", orchestrator.OpBoot)
	c.runSession("cycle", orchestrator.OpReboot)
	c.mu.Lock()
	for _, n := range nodes {
		if c.boots[n] != 2 {
			t.Errorf("%s booted %d times, want 2 (boot, reboot)", n, c.boots[n])
		}
	}
	c.mu.Unlock()

	bad := c.fleet.Members()[0].BMC
	if err := bad.SetFaults(redfishsim.Faults{ErrorPaths: []string{"/redfish/v1/Systems/*/Actions"}}); err != nil {
		t.Fatal(err)
	}
	c.bos("POST", "/v2/sessions", map[string]any{"name": "off2", "operation": "shutdown", "template_name": "compute"}, nil)
	var comps []orchestrator.Component
	if err := waitFor(t.Context(), 2*time.Minute, func() (bool, error) {
		c.bos("GET", "/v2/components?session=off2", nil, &comps)
		done := 0
		for _, comp := range comps {
			switch {
			case comp.ID == bad.Xname()+"n0" && strings.HasPrefix(comp.Error, "PCS Soft-Off: "):
				done++
			case comp.ID != bad.Xname()+"n0" && !comp.Enabled && comp.Status.Status == orchestrator.StatusStable:
				done++
			}
		}
		return done == len(nodes), nil
	}); err != nil {
		t.Fatalf("shutdown with a BMC refusing resets: components %+v: %v", comps, err)
	}
	for _, comp := range comps {
		if comp.ID == bad.Xname()+"n0" && (!comp.Enabled || comp.Status.Status != orchestrator.StatusPowerOffGracefullyCalled ||
			!comp.LastAction.Failed) {
			t.Errorf("refused Soft-Off: component %+v", comp)
		}
	}
}

// TestBosRestartMidSession: bos stops while a boot session's nodes are
// powered on and still booting; the nodes finish booting while it is down,
// and a new bos on the same database completes the session without
// powering any node on again: each BMC got one On, each node booted once.
func TestBosRestartMidSession(t *testing.T) {
	c := newBootCluster(t, 4)
	nodes := c.nodeIDs()
	c.bos("PATCH", "/v2/options", map[string]any{"polling_frequency": 1, "max_power_off_wait_time": 20}, nil)
	c.bos("PUT", "/v2/sessiontemplates/compute", map[string]any{"enable_cfs": false, "boot_sets": map[string]any{
		"compute": map[string]any{"path": c.images.URL + "/img1/manifest.json", "type": "s3", "node_list": nodes}}}, nil)
	c.runSession("off", orchestrator.OpShutdown)

	resets := map[string]map[string]int{}
	for _, m := range c.fleet.Members() {
		resets[m.BMC.Xname()] = m.BMC.Stats().Resets
	}
	ons := c.pcsOns()
	held := make(chan struct{})
	c.mu.Lock()
	c.held = held
	c.mu.Unlock()
	c.bos("POST", "/v2/sessions", map[string]any{"name": "boot", "operation": "boot", "template_name": "compute"}, nil)
	var comps []orchestrator.Component
	if err := waitFor(t.Context(), time.Minute, func() (bool, error) {
		c.bos("GET", "/v2/components?session=boot", nil, &comps)
		called := 0
		for _, comp := range comps {
			if comp.Status.Status == orchestrator.StatusPowerOnCalled {
				called++
			}
		}
		on := 0
		for _, p := range c.power() {
			if p == "on" {
				on++
			}
		}
		return called == len(nodes) && on == len(nodes), nil
	}); err != nil {
		t.Fatalf("power-on called and nodes on: components %+v: %v", comps, err)
	}
	c.stopBos()
	c.mu.Lock()
	c.held = nil
	c.mu.Unlock()
	close(held)
	c.startBos()
	comps = c.waitSession("boot", orchestrator.OpBoot)

	for _, comp := range comps {
		if comp.ActualState.BSSToken == "" || comp.ActualState.BSSToken != comp.DesiredState.BSSToken ||
			comp.EventStats != (orchestrator.EventStats{}) {
			t.Errorf("%s after the restart: actual %+v desired %+v", comp.ID, comp.ActualState, comp.DesiredState)
		}
	}
	for _, m := range c.fleet.Members() {
		got := m.BMC.Stats().Resets
		for rt, n := range resets[m.BMC.Xname()] {
			got[rt] -= n
			if got[rt] == 0 {
				delete(got, rt)
			}
		}
		if d := cmp.Diff(map[string]int{"On": 1}, got); d != "" {
			t.Errorf("BMC %s resets during the session (-want +got):\n%s", m.BMC.Xname(), d)
		}
	}
	if got := c.pcsOns() - ons; got != 1 {
		t.Errorf("%d PCS On transitions during the session, want 1", got)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range nodes {
		if c.boots[n] != 1 {
			t.Errorf("%s booted %d times, want 1", n, c.boots[n])
		}
	}
}

// pcsOns counts the On transitions pcs holds.
func (c *bootCluster) pcsOns() int {
	c.t.Helper()
	trs, err := c.pcs.Transitions(c.t.Context())
	if err != nil {
		c.t.Fatal(err)
	}
	n := 0
	for _, tr := range trs {
		if tr.Operation == pcs.OpOn {
			n++
		}
	}
	return n
}
