package power

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/power/pcs"
)

// capTask starts a power-cap task and waits for pcs to report it done.
func (e *env) capTask(method, path string, body any) CapTask {
	e.t.Helper()
	code, b := e.call(method, path, body)
	if code != 200 {
		e.t.Fatalf("%s %s: %d %s", method, path, code, b)
	}
	var created struct{ TaskID string }
	_ = json.Unmarshal(b, &created)
	e.events.wait(e.t, func(ev Event) bool { return ev.Kind == EventCapDone && ev.ID == created.TaskID })
	code, b = e.call("GET", "/power-cap/"+created.TaskID, nil)
	var t CapTask
	if code != 200 || json.Unmarshal(b, &t) != nil || t.Status != CapCompleted {
		e.t.Fatalf("GET power-cap task: %d %s", code, b)
	}
	return t
}

func ip(n int) *int { return &n }

// TestPowerCap: a snapshot reads the node's control and limits; a patch
// sets a value within them and refuses others, naming why.
func TestPowerCap(t *testing.T) {
	e := newEnv(t, 1, nil)
	n := e.node(0)
	snap := e.capTask("POST", "/power-cap/snapshot", map[string]any{"xnames": []string{n, n + "p0"}})
	want := []CapComponent{
		{Xname: n, Limits: &CapLimits{HostLimitMax: ip(redfishsim.PowerCapMax), HostLimitMin: ip(redfishsim.PowerCapMin),
			PowerupPower: ip(redfishsim.PowerupWatts)},
			Controls: []CapControl{{Name: "Node Power Control", Max: ip(redfishsim.PowerCapMax), Min: ip(redfishsim.PowerCapMin)}}},
		{Xname: n + "p0", Error: "Type, Processor unsupported for power capping"},
	}
	if diff := cmp.Diff(want, snap.Components, cmp.AllowUnexported(CapComponent{}, CapLimits{})); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
	if snap.Counts != (pcs.TaskCounts{Total: 2, Succeeded: 1, Unsupported: 1}) || snap.Type != CapSnapshot {
		t.Errorf("snapshot task: %+v", snap)
	}
	patch := e.capTask("PATCH", "/v1/power-cap", map[string]any{"components": []any{
		map[string]any{"xname": n, "controls": []any{map[string]any{"name": "Node Power Control", "value": 500},
			map[string]any{"name": "Accel", "value": 100}}}}})
	got := patch.Components[0]
	if got.Error != "Skipping undefined control 'Accel'" || got.Controls[0].Current == nil || *got.Controls[0].Current != 500 {
		t.Errorf("patch: %+v", got)
	}
	patch = e.capTask("PATCH", "/power-cap", map[string]any{"components": []any{
		map[string]any{"xname": n, "controls": []any{map[string]any{"name": "Node Power Control", "value": 900}}}}})
	if got := patch.Components[0]; got.Error != "Control (Node Power Control) value (900) is more than maximum (850)" || *got.Controls[0].Current != 500 {
		t.Errorf("patch over the maximum: %+v", got)
	}
	for _, tc := range []struct {
		method, path string
		body         any
		want         string
	}{
		{method: "POST", path: "/power-cap/snapshot", body: map[string]any{}, want: "Xname list is empty. A list of xnames is required"},
		{method: "PATCH", path: "/power-cap", body: map[string]any{"components": []any{map[string]any{"xname": n,
			"controls": []any{map[string]any{"name": "", "value": 1}}}}}, want: "Invalid control parameters for xnames detected " + n + " "},
		{method: "GET", path: "/power-cap/snapshot", want: "invalid UUID length: 8"},
	} {
		if code, b := e.call(tc.method, tc.path, tc.body); code != 400 || !strings.Contains(string(b), tc.want) {
			t.Errorf("%s %s: %d %s, want 400 %q", tc.method, tc.path, code, b, tc.want)
		}
	}
	if code, b := e.call("GET", "/power-cap", nil); code != 200 || strings.Count(string(b), `"taskID"`) != 3 {
		t.Errorf("list: %d %s", code, b)
	}
}

// TestCAPMCPowerCap: set_power_cap and get_power_cap by NID.
func TestCAPMCPowerCap(t *testing.T) {
	e := newEnv(t, 1, nil)
	n := e.node(0)
	req, _ := http.NewRequestWithContext(t.Context(), "PATCH", e.hsmURL+"/hsm/v2/State/Components/"+n+"/NID", strings.NewReader(`{"NID":7}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		t.Fatalf("set NID: %d", resp.StatusCode)
	}
	code, b := e.call("POST", "/capmc/v1/set_power_cap", map[string]any{"nids": []any{map[string]any{"nid": 7,
		"controls": []any{map[string]any{"name": "node", "val": 400}}}}})
	if code != 200 || string(b) != `{"e":0,"err_msg":"","nids":[{"nid":7,"e":0,"err_msg":""}]}`+"\n" {
		t.Fatalf("set_power_cap: %d %s", code, b)
	}
	code, b = e.call("POST", "/capmc/v1/get_power_cap", map[string]any{"nids": []int{7}})
	if code != 200 || string(b) != `{"e":0,"err_msg":"","nids":[{"nid":7,"e":0,"err_msg":"","controls":[{"name":"node","val":400}]}]}`+"\n" {
		t.Errorf("get_power_cap: %d %s", code, b)
	}
	if code, b := e.call("POST", "/capmc/v1/get_power_cap", map[string]any{"nids": []int{99}}); code != 400 || !strings.Contains(string(b), "invalid nids: 99") {
		t.Errorf("unknown nid: %d %s", code, b)
	}
	wantCaps := capmcCapabilities{Groups: []capmcCapGroup{{Name: "X86_350_850_900", Desc: "X86",
		HostLimitMax: redfishsim.PowerCapMax, HostLimitMin: redfishsim.PowerCapMin, Supply: redfishsim.PowerCapCapacity,
		Powerup: redfishsim.PowerupWatts, NIDs: []int{7},
		Controls: []capmcCapControl{{Name: "node", Desc: "Node manager control", Min: redfishsim.PowerCapMin, Max: redfishsim.PowerCapMax}}}}}
	for _, body := range []any{map[string]any{"nids": []int{}}, map[string]any{"nids": []int{7}}, map[string]any{}} {
		code, b := e.call("POST", "/capmc/v1/get_power_cap_capabilities", body)
		var got capmcCapabilities
		if code != 200 || json.Unmarshal(b, &got) != nil {
			t.Fatalf("get_power_cap_capabilities %v: %d %s", body, code, b)
		}
		if diff := cmp.Diff(wantCaps, got); diff != "" {
			t.Errorf("get_power_cap_capabilities %v (-want +got):\n%s", body, diff)
		}
	}
	code, b = e.call("POST", "/capmc/v1/get_power_cap_capabilities", map[string]any{"nids": []int{99, 7, 7}})
	if code != 400 || !strings.Contains(string(b), `"err_msg":"Bad Request: invalid nids: 99; duplicate nids: 7"`) {
		t.Errorf("bad nids: %d %s", code, b)
	}
}
