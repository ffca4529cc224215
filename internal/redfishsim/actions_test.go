package redfishsim

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReset(t *testing.T) {
	const sys = "/redfish/v1/Systems/Node0"
	const target = sys + "/Actions/ComputerSystem.Reset"
	tests := []struct {
		name      string
		from      string // PowerState set up first with ForceOff/On
		body      string
		path      string
		want      int
		wantCode  string
		wantPower string
	}{
		{name: "ForceOff", from: "On", body: `{"ResetType":"ForceOff"}`, want: 204, wantPower: "Off"},
		{name: "GracefulShutdown", from: "On", body: `{"ResetType":"GracefulShutdown"}`, want: 204, wantPower: "Off"},
		{name: "On", from: "Off", body: `{"ResetType":"On"}`, want: 204, wantPower: "On"},
		{name: "GracefulRestart", from: "Off", body: `{"ResetType":"GracefulRestart"}`, want: 204, wantPower: "On"},
		{name: "ForceRestart", from: "On", body: `{"ResetType":"ForceRestart"}`, want: 204, wantPower: "On"},
		{name: "PushPowerButton on", from: "On", body: `{"ResetType":"PushPowerButton"}`, want: 204, wantPower: "Off"},
		{name: "PushPowerButton off", from: "Off", body: `{"ResetType":"PushPowerButton"}`, want: 204, wantPower: "On"},
		{name: "Nmi keeps state", from: "Off", body: `{"ResetType":"Nmi"}`, want: 204, wantPower: "Off"},
		{name: "not advertised", from: "On", body: `{"ResetType":"PowerCycle"}`, want: 400, wantCode: "Base.1.8.ActionParameterNotSupported", wantPower: "On"},
		{name: "unknown type", from: "On", body: `{"ResetType":"Explode"}`, want: 400, wantCode: "Base.1.8.ActionParameterNotSupported", wantPower: "On"},
		{name: "type not a string", from: "On", body: `{"ResetType":1}`, want: 400, wantCode: "Base.1.8.ActionParameterNotSupported", wantPower: "On"},
		{name: "missing type", from: "On", body: `{}`, want: 400, wantCode: "Base.1.8.ActionParameterMissing", wantPower: "On"},
		{name: "malformed", from: "On", body: `{"ResetType":`, want: 400, wantCode: "Base.1.8.MalformedJSON", wantPower: "On"},
		{name: "unknown action", from: "On", body: `{}`, path: sys + "/Actions/ComputerSystem.Explode", want: 400, wantCode: "Base.1.8.ActionNotSupported", wantPower: "On"},
		{name: "missing system", from: "On", body: `{"ResetType":"On"}`, path: "/redfish/v1/Systems/Node9/Actions/ComputerSystem.Reset", want: 404, wantPower: "On"},
		{name: "POST to a resource", from: "On", body: `{}`, path: sys, want: 405, wantPower: "On"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, srv := startBMC(t, Config{Xname: "x3000c0s1b0", Tree: Generate("x3000c0s1b0", 2)})
			setup := map[string]string{"On": `{"ResetType":"On"}`, "Off": `{"ResetType":"ForceOff"}`}[tt.from]
			if resp, body := do(t, srv, req{method: "POST", path: target, body: setup, user: testUser, pass: testPass}); resp.StatusCode != 204 {
				t.Fatalf("setup: %d %s", resp.StatusCode, body)
			}
			path := tt.path
			if path == "" {
				path = target
			}
			resp, body := do(t, srv, req{method: "POST", path: path, body: tt.body, user: testUser, pass: testPass})
			if resp.StatusCode != tt.want {
				t.Fatalf("status = %d, want %d; body %s", resp.StatusCode, tt.want, body)
			}
			if tt.wantCode != "" && errorCode(body) != tt.wantCode {
				t.Errorf("error code = %q, want %q", errorCode(body), tt.wantCode)
			}
			if got := get(t, srv, sys)["PowerState"]; got != tt.wantPower {
				t.Errorf("PowerState = %v, want %s", got, tt.wantPower)
			}
			if got := get(t, srv, "/redfish/v1/Systems/Node1")["PowerState"]; got != "On" {
				t.Errorf("the other system changed too: PowerState = %v", got)
			}
		})
	}
}

func TestNetworkProtocolPatchIsKept(t *testing.T) {
	const np = "/redfish/v1/Managers/BMC/NetworkProtocol"
	_, srv := startBMC(t, Config{Xname: "x3000c0s1b0", Tree: Generate("x3000c0s1b0", 1)})
	before, _ := do(t, srv, req{method: "GET", path: np, user: testUser, pass: testPass})
	oldTag := before.Header.Get("ETag")
	patch := `{"NTP":{"ProtocolEnabled":true,"NTPServers":["10.1.1.1"]},"SSH":{"ProtocolEnabled":false}}`
	steps := []struct {
		name   string
		rq     req
		want   int
		header map[string]string
	}{
		{name: "stale If-Match", rq: req{method: "PATCH", path: np, body: patch, header: map[string]string{"If-Match": `W/"0000000000000000"`}}, want: 412},
		{name: "PATCH with current ETag", rq: req{method: "PATCH", path: np, body: patch, header: map[string]string{"If-Match": oldTag}}, want: 200},
		{name: "old ETag now stale", rq: req{method: "PATCH", path: np, body: `{"HostName":"x"}`, header: map[string]string{"If-Match": oldTag}}, want: 412},
		{name: "read-only property", rq: req{method: "PATCH", path: np, body: `{"@odata.id":"/elsewhere"}`}, want: 400},
		{name: "not an object", rq: req{method: "PATCH", path: np, body: `["NTP"]`}, want: 400},
		{name: "PowerState only via Reset", rq: req{method: "PATCH", path: "/redfish/v1/Systems/Node0", body: `{"PowerState":"Off"}`}, want: 400},
		{name: "missing resource", rq: req{method: "PATCH", path: np + "x", body: `{}`}, want: 404},
		{name: "If-None-Match current", rq: req{method: "GET", path: np, header: map[string]string{"If-None-Match": oldTag}}, want: 200},
	}
	for _, st := range steps {
		st.rq.user, st.rq.pass = testUser, testPass
		resp, body := do(t, srv, st.rq)
		if resp.StatusCode != st.want {
			t.Fatalf("%s: status = %d, want %d; body %s", st.name, resp.StatusCode, st.want, body)
		}
	}
	got := get(t, srv, np)
	want := map[string]any{
		"NTP": map[string]any{"ProtocolEnabled": true, "NTPServers": []any{"10.1.1.1"}},
		"SSH": map[string]any{"ProtocolEnabled": false, "Port": float64(22)},
	}
	if diff := cmp.Diff(want, map[string]any{"NTP": got["NTP"], "SSH": got["SSH"]}); diff != "" {
		t.Errorf("NetworkProtocol after PATCH (-want +got):\n%s", diff)
	}
	if got["HostName"] != "x3000c0s1b0" || got["@odata.id"] != np {
		t.Errorf("refused PATCHes changed the resource: %v", got)
	}
	resp, _ := do(t, srv, req{method: "GET", path: np, user: testUser, pass: testPass})
	tag := resp.Header.Get("ETag")
	if resp, _ := do(t, srv, req{method: "GET", path: np, user: testUser, pass: testPass, header: map[string]string{"If-None-Match": tag}}); resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match with the current ETag: %d, want 304", resp.StatusCode)
	}
}

// TestResetsCounted: Stats.Resets counts every accepted Reset posted over
// HTTP by type, one that changes nothing included, and neither refused
// ones nor the simulator's own power button.
func TestResetsCounted(t *testing.T) {
	const target = "/redfish/v1/Systems/Node0/Actions/ComputerSystem.Reset"
	b, srv := startBMC(t, Config{Xname: "x3000c0s1b0", Tree: Generate("x3000c0s1b0", 1)})
	for _, body := range []string{`{"ResetType":"On"}`, `{"ResetType":"On"}`, `{"ResetType":"ForceOff"}`, `{"ResetType":"Explode"}`} {
		do(t, srv, req{method: "POST", path: target, body: body, user: testUser, pass: testPass})
	}
	if err := b.Reset("/redfish/v1/Systems/Node0", "On"); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[string]int{"On": 2, "ForceOff": 1}, b.Stats().Resets); d != "" {
		t.Errorf("Resets (-want +got):\n%s", d)
	}
}
