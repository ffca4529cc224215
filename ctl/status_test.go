package ctl_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/ctl"
)

func TestStatus(t *testing.T) {
	urls := startSuite(t)
	seedHSM(t, urls["hsm"])
	e := suiteEnv(t, urls)
	var st ctl.Status
	hmsJSON(t, e, &st, "status")
	for _, d := range st.Daemons {
		if !d.Ready || d.Version == "" || d.URL != urls[d.Name] {
			t.Errorf("daemon %+v, want ready with a version at %s", d, urls[d.Name])
		}
	}
	if len(st.Daemons) != 9 {
		t.Errorf("%d daemons, want 9", len(st.Daemons))
	}
	want := &ctl.NodeCounts{Total: 3, ByState: map[string]int{"Ready": 2, "Standby": 1}, ByRole: map[string]int{"Compute": 2, "Application": 1}}
	if diff := cmp.Diff(want, st.Nodes); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
	// reds saw no lease (HSM's unowned MAC counts only when reds is down).
	if st.UnknownMACs == nil || *st.UnknownMACs != 0 || st.Transitions == nil || len(st.Transitions) != 0 {
		t.Errorf("unknown MACs %v, transitions %+v", st.UnknownMACs, st.Transitions)
	}

	// A power transition (of a node without a BMC: it fails) shows up.
	resp, err := http.Post(urls["pcs"]+"/transitions", "application/json",
		strings.NewReader(`{"operation":"On","location":[{"xname":"x3000c0s1b0n0"}]}`))
	mustOK(t, err)
	resp.Body.Close()
	st = ctl.Status{}
	hmsJSON(t, e, &st, "status")
	if len(st.Transitions) != 1 || st.Transitions[0].TransitionID == "" || st.Transitions[0].Operation != "On" {
		t.Errorf("transitions %+v, want the one created", st.Transitions)
	}

	r := hms(t, e, "status")
	if r.err != nil || !strings.Contains(r.stdout, "by state:") || !strings.Contains(r.stdout, "Ready 2, Standby 1") {
		t.Errorf("status table %q, err %v", r.stdout, r.err)
	}

	// A daemon down: the rest is still reported, the exit status is 1.
	down := closedURL(t)
	r = hms(t, e, "status", "-bss-url", down, "-o", "json")
	if r.code() != 1 {
		t.Fatalf("exit %d with bss down, want 1", r.code())
	}
	st = ctl.Status{}
	mustOK(t, jsonUnmarshal(r.stdout, &st))
	for _, d := range st.Daemons {
		if d.Ready != (d.Name != "bss") {
			t.Errorf("daemon %+v", d)
		}
		if d.Name == "bss" && !strings.Contains(d.Error, "cannot reach bss at "+down) {
			t.Errorf("bss error %q", d.Error)
		}
	}
	if st.Nodes == nil || st.Nodes.Total != 3 {
		t.Errorf("nodes %+v with bss down", st.Nodes)
	}
}
