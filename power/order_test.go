package power

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/power/pcs"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// powerLog records the PowerState changes of simulated BMCs, in order, as
// "<xname> <state>".
type powerLog struct {
	mu     sync.Mutex
	byPath map[string]string // bmc + resource path -> component xname
	seq    []string
}

func (l *powerLog) record(bmc, path, state string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	x, ok := l.byPath[bmc+path]
	if !ok {
		x = bmc + path
	}
	l.seq = append(l.seq, x+" "+state)
}

func (l *powerLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.seq
	l.seq = nil
	return out
}

// chassisEnv is a chassis x3000c0 with its controller x3000c0b0, compute
// slots x3000c0s0 and x3000c0s1, and a node in each (BMCs x3000c0s0b0 and
// x3000c0s1b0), all in HSM, their power changes recorded in log.
func chassisEnv(t *testing.T, faults map[int]redfishsim.Faults) (*env, *powerLog) {
	t.Helper()
	log := &powerLog{byPath: map[string]string{
		"x3000c0b0/redfish/v1/Chassis/Enclosure": "x3000c0",
		"x3000c0b0/redfish/v1/Chassis/Blade0":    "x3000c0s0",
		"x3000c0b0/redfish/v1/Chassis/Blade1":    "x3000c0s1",
		"x3000c0s0b0/redfish/v1/Systems/Node0":   "x3000c0s0b0n0",
		"x3000c0s1b0/redfish/v1/Systems/Node0":   "x3000c0s1b0n0",
	}}
	e := newEnvFleets(t, faults,
		redfishsim.FleetConfig{Count: 2, Tree: redfishsim.TemplatePower(1), OnPower: log.record},
		redfishsim.FleetConfig{Count: 1, Tree: redfishsim.TemplateChassis(2), OnPower: log.record,
			Xname: func(int) string { return "x3000c0b0" }})
	var comps []hsm.Component
	for _, c := range []struct{ id, typ string }{
		{id: "x3000c0", typ: "Chassis"}, {id: "x3000c0s0", typ: "ComputeModule"}, {id: "x3000c0s1", typ: "ComputeModule"},
	} {
		comps = append(comps, hsm.Component{ID: c.id, Type: c.typ, State: hsm.StateOn, Flag: hsm.FlagOK})
	}
	if err := e.hsm.PostComponents(t.Context(), comps, false); err != nil {
		t.Fatal(err)
	}
	return e, log
}

// before reports whether a appears in seq before b.
func before(seq []string, a, b string) bool {
	i, j := slices.Index(seq, a), slices.Index(seq, b)
	return i >= 0 && j >= 0 && i < j
}

// TestParentChildOrdering: a chassis and its slots are powered on before
// their nodes and off after them, and a restart does both halves, as PCS
// sequences by component type; the Redfish resets are recorded in the
// order the BMCs applied them.
func TestParentChildOrdering(t *testing.T) {
	e, log := chassisEnv(t, nil)
	all := locs("x3000c0s1b0n0", "x3000c0", "x3000c0s0b0n0", "x3000c0s1", "x3000c0s0")
	// Each pair: the first change must come before the second.
	type pair struct{ first, then string }
	offPairs := []pair{
		{first: "x3000c0s0b0n0 Off", then: "x3000c0s0 Off"}, {first: "x3000c0s1b0n0 Off", then: "x3000c0s1 Off"},
		{first: "x3000c0s0 Off", then: "x3000c0 Off"}, {first: "x3000c0s1 Off", then: "x3000c0 Off"},
	}
	onPairs := []pair{
		{first: "x3000c0 On", then: "x3000c0s0 On"}, {first: "x3000c0 On", then: "x3000c0s1 On"},
		{first: "x3000c0s0 On", then: "x3000c0s0b0n0 On"}, {first: "x3000c0s1 On", then: "x3000c0s1b0n0 On"},
	}
	for _, tc := range []struct {
		op    string
		pairs []pair
		n     int // power changes expected
	}{
		{op: "off", pairs: offPairs, n: 5},
		{op: "on", pairs: onPairs, n: 5},
		{op: "hard-restart", pairs: append(append(slices.Clone(offPairs), onPairs...), pair{first: "x3000c0 Off", then: "x3000c0 On"}), n: 10},
		{op: "soft-restart", pairs: append(slices.Clone(offPairs), onPairs...), n: 10},
	} {
		t.Run(tc.op, func(t *testing.T) {
			tr := e.transition(tc.op, 1, all...)
			for _, tk := range tr.Tasks {
				if tk.Status != pcs.TaskSucceeded {
					t.Errorf("%s: task %+v", tc.op, tk)
				}
			}
			seq := log.take()
			if len(seq) != tc.n {
				t.Errorf("%s: %d power changes, want %d: %q", tc.op, len(seq), tc.n, seq)
			}
			for _, p := range tc.pairs {
				if !before(seq, p.first, p.then) {
					t.Errorf("%s: want %q before %q in %q", tc.op, p.first, p.then, seq)
				}
			}
		})
	}
}

// TestParentFailsWithChild: a node whose BMC fails its resets keeps its
// slot and chassis on (they fail naming it, in PCS's dependency texts);
// the other slot goes off. Powering on with the chassis failing fails the
// slots and nodes under it without powering them.
func TestParentFailsWithChild(t *testing.T) {
	e, log := chassisEnv(t, nil)
	all := locs("x3000c0", "x3000c0s0", "x3000c0s1", "x3000c0s0b0n0", "x3000c0s1b0n0")
	if err := e.fleet.Members()[0].BMC.SetFaults(redfishsim.Faults{
		ErrorPaths: []string{"/redfish/v1/Systems/Node0/Actions/ComputerSystem.Reset"}}); err != nil {
		t.Fatal(err)
	}
	tr := e.transition("off", 1, all...)
	want := map[string]string{
		"x3000c0s0":     "Failed to apply transition, forceoff, to dependency, x3000c0s0b0n0.",
		"x3000c0":       "Failed to apply transition, forceoff, to dependency, x3000c0s0.",
		"x3000c0s1":     "",
		"x3000c0s1b0n0": "",
	}
	for x, tk := range tasks(tr) {
		w, ok := want[x]
		switch {
		case !ok && tk.Status != pcs.TaskFailed:
			t.Errorf("off %s: %+v, want failed", x, tk)
		case ok && w == "" && tk.Status != pcs.TaskSucceeded:
			t.Errorf("off %s: %+v, want succeeded", x, tk)
		case ok && w != "" && (tk.Status != pcs.TaskFailed || tk.Error != w || tk.Description != w):
			t.Errorf("off %s: %+v, want failed with %q", x, tk, w)
		}
	}
	if diff := cmp.Diff([]string{"x3000c0s1b0n0 Off", "x3000c0s1 Off"}, log.take()); diff != "" {
		t.Errorf("power changes (-want +got):\n%s", diff)
	}
	_ = e.fleet.Members()[0].BMC.SetFaults(redfishsim.Faults{})
	e.transition("off", 1, all...)
	log.take()
	// The chassis controller now fails its resets: nothing under it is powered.
	_ = e.fleets[1].Members()[0].BMC.SetFaults(redfishsim.Faults{ErrorPaths: []string{"/redfish/v1/Chassis/Enclosure/Actions/Chassis.Reset"}})
	tr = e.transition("on", 1, all...)
	for x, tk := range tasks(tr) {
		if tk.Status != pcs.TaskFailed {
			t.Errorf("on %s: %+v, want failed", x, tk)
		}
	}
	if tk := tasks(tr)["x3000c0s0b0n0"]; tk.Error != "Failed to apply transition, on, to dependency, x3000c0s0." &&
		tk.Error != "Failed to apply transition, on, to dependency, x3000c0." {
		t.Errorf("node under the failed chassis: %+v", tk)
	}
	if seq := log.take(); len(seq) != 0 {
		t.Errorf("powered under a chassis that failed: %q", seq)
	}
}

// TestSampleEveryPowerable: a sampling round reads the chassis and slots
// on their chassis controller, and reports a switch and a PDU outlet HSM
// has no Redfish endpoint for as undefined/unavailable with the reason,
// rather than leaving them out.
func TestSampleEveryPowerable(t *testing.T) {
	e, _ := chassisEnv(t, nil)
	if err := e.hsm.PostComponents(t.Context(), []hsm.Component{
		{ID: "x3000c0w1", Type: "MgmtSwitch", State: hsm.StateOn, Flag: hsm.FlagOK},
		{ID: "x3000m0p0v1", Type: "CabinetPDUPowerConnector", State: hsm.StateOn, Flag: hsm.FlagOK},
	}, false); err != nil {
		t.Fatal(err)
	}
	if err := e.daemon.Service().Sample(t.Context()); err != nil {
		t.Fatal(err)
	}
	code, b := e.call("POST", "/power-status", map[string]any{"xname": []string{
		"x3000c0", "x3000c0s1", "x3000c0s0b0n0", "x3000c0w1", "x3000m0p0v1"}})
	if code != 200 {
		t.Fatalf("power-status: %d %s", code, b)
	}
	var got pcs.PowerStatusList
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, st := range got.Status {
		rows = append(rows, strings.Join([]string{st.Xname, st.PowerState, st.MgmtState, st.Error}, " | "))
	}
	want := []string{
		"x3000c0 | on | available | ",
		"x3000c0s1 | on | available | ",
		"x3000c0s0b0n0 | on | available | ",
		"x3000c0w1 | undefined | unavailable | no Redfish endpoint for x3000c0w1 in HSM",
		"x3000m0p0v1 | undefined | unavailable | no Redfish endpoint for x3000m0p0v1 in HSM",
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("power-status (-want +got):\n%s", diff)
	}
	if st := got.Status[0]; !slices.Equal(st.Supported, []string{"On", "Force-Off"}) {
		t.Errorf("chassis supportedPowerTransitions %q, want On, Force-Off", st.Supported)
	}
}
