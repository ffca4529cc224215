package ctl_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/ctl"
	"github.com/hmsuite/hms/statemgr/client"
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

	// HSM's state changes are the recent transitions: newest first, with
	// who made them.
	hbtd := client.New(urls["hsm"], nil, "hbtd")
	mustOK(t, hbtd.BulkStateData(t.Context(), []string{"x3000c0s1b0n0"}, "Ready", "Warning", false, nil))
	st = ctl.Status{}
	hmsJSON(t, e, &st, "status")
	if len(st.StateChanges) != 4 || st.StateChangesNote != "" {
		t.Fatalf("state changes %+v (note %q), want the 3 creations and a Flag change", st.StateChanges, st.StateChangesNote)
	}
	if c := st.StateChanges[0]; c.ID != "x3000c0s1b0n0" || c.OldState != "Ready" || c.Flag != "Warning" || c.Agent != "hbtd" {
		t.Errorf("newest state change %+v, want x3000c0s1b0n0 Ready -> Ready/Warning by hbtd", c)
	}

	r := hms(t, e, "status")
	for _, want := range []string{"by state:", "Ready 2, Standby 1", "x3000c0s1b0n0 Ready -> Ready/Warning (API hbtd)",
		"x3000c0s3b0n0 (new) -> Ready (API test)", "Power transitions (pcs):"} {
		if r.err != nil || !strings.Contains(r.stdout, want) {
			t.Errorf("status table %q, err %v: want %q", r.stdout, r.err, want)
		}
	}
	var v ctl.NodeView
	hmsJSON(t, e, &v, "describe", "node", "x3000c0s1b0n0")
	if len(v.StateChanges) != 2 || v.StateChanges[0].Flag != "Warning" || v.StateChanges[1].OldState != "" {
		t.Errorf("describe: state changes %+v, want the Flag change then the creation", v.StateChanges)
	}
	if r := hms(t, e, "describe", "node", "x3000c0s1b0n0"); !strings.Contains(r.stdout, "  changes:"+strings.Repeat(" ", 10)+"20") {
		t.Errorf("describe table %q, want the changes lined up with the other values", r.stdout)
	}

	// An HSM without the history (a shipped one answers 404 "no such
	// xname."): the section is left out with a note, and nothing failed.
	old := shippedHSM(t, urls["hsm"])
	st = ctl.Status{}
	hmsJSON(t, e, &st, "status", "-hsm-url", old)
	if len(st.StateChanges) != 0 || !strings.Contains(st.StateChangesNote, "no state history") || len(st.Errors) > 0 {
		t.Errorf("status against a shipped HSM: changes %+v, note %q, errors %v", st.StateChanges, st.StateChangesNote, st.Errors)
	}
	if r := hms(t, e, "status", "-hsm-url", old); !strings.Contains(r.stdout, "none; hsm keeps no state history") {
		t.Errorf("status table against a shipped HSM %q", r.stdout)
	}
	v = ctl.NodeView{}
	hmsJSON(t, e, &v, "describe", "node", "x3000c0s1b0n0", "-hsm-url", old)
	if len(v.StateChanges) != 0 || v.StateChangesNote == "" || v.State == nil || len(v.Errors) > 0 {
		t.Errorf("describe against a shipped HSM: %+v", v)
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

// shippedHSM serves the HSM at base as a shipped HSM would: without the
// History extension, whose paths it answers 404 as unknown components.
func shippedHSM(t *testing.T, base string) string {
	t.Helper()
	u, err := url.Parse(base)
	mustOK(t, err)
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/State/Components/History") {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"type":"about:blank","title":"Not Found","detail":"no such xname.","status":404}` + "\n"))
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
