package power

import (
	"testing"

	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/power/pcs"
)

// TestDMTFMockupOffOn: off and on against a BMC serving the DMTF
// public-rackmount1 mockup (a real vendor-shaped tree, not our template),
// each confirmed by reading PowerState back.
func TestDMTFMockupOffOn(t *testing.T) {
	tree, err := redfishsim.LoadMockup("../internal/redfishsim/testdata/mockups/public-rackmount1")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvTree(t, 1, tree, nil)
	n := e.node(0)
	for _, op := range []string{"off", "on"} {
		tr := e.transition(op, 1, locs(n)...)
		if got := tasks(tr)[n]; tr.Status != pcs.TransitionCompleted || got.Status != pcs.TaskSucceeded {
			t.Fatalf("%s on the DMTF mockup: transition %s, task %+v", op, tr.Status, got)
		}
		st, err := e.hsm.Component(t.Context(), n)
		want := map[string]string{"off": "Off", "on": "On"}[op]
		if err != nil || st.State != want {
			t.Errorf("HSM after %s: %+v %v, want %s", op, st, err, want)
		}
	}
}
