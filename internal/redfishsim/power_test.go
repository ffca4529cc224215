package redfishsim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// call calls the BMC's handler directly (no sockets, so it runs in a
// synctest bubble).
func call(t *testing.T, b *BMC, method, path, body string) (int, map[string]any) {
	t.Helper()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.SetBasicAuth(testUser, testPass)
	w := httptest.NewRecorder()
	b.ServeHTTP(w, r)
	var m map[string]any
	_ = json.Unmarshal(w.Body.Bytes(), &m)
	return w.Code, m
}

// TestPowerFaults: PowerDelay postpones the new PowerState, IgnoreGraceful
// drops graceful resets, OmitAllowableValues hides the reset types.
func TestPowerFaults(t *testing.T) {
	const sys = "/redfish/v1/Systems/Node0"
	const target = sys + "/Actions/ComputerSystem.Reset"
	synctest.Test(t, func(t *testing.T) {
		b, err := New(Config{Xname: "x3000c0s1b0", Tree: Generate("x3000c0s1b0", 1), User: testUser, Password: testPass,
			Faults: Faults{PowerDelay: 2 * time.Second, OmitAllowableValues: true}})
		if err != nil {
			t.Fatal(err)
		}
		if code, _ := call(t, b, "POST", target, `{"ResetType":"ForceOff"}`); code != http.StatusNoContent {
			t.Fatalf("ForceOff: %d", code)
		}
		_, m := call(t, b, "GET", sys, "")
		if m["PowerState"] != "On" {
			t.Errorf("PowerState before the delay = %v, want On", m["PowerState"])
		}
		if strings.Contains(mustJSON(m["Actions"]), "AllowableValues") {
			t.Errorf("AllowableValues served: %v", m["Actions"])
		}
		time.Sleep(2 * time.Second)
		if _, m := call(t, b, "GET", sys, ""); m["PowerState"] != "Off" {
			t.Errorf("PowerState after the delay = %v, want Off", m["PowerState"])
		}
		_ = b.SetFaults(Faults{IgnoreGraceful: true})
		call(t, b, "POST", target, `{"ResetType":"On"}`)
		if code, _ := call(t, b, "POST", target, `{"ResetType":"GracefulShutdown"}`); code != http.StatusNoContent {
			t.Fatalf("GracefulShutdown: %d", code)
		}
		if _, m := call(t, b, "GET", sys, ""); m["PowerState"] != "On" {
			t.Errorf("PowerState after an ignored GracefulShutdown = %v, want On", m["PowerState"])
		}
	})
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestTemplatePower: the chassis links a Power resource whose limits a
// PATCH changes.
func TestTemplatePower(t *testing.T) {
	b, err := New(Config{Xname: "x3000c0s1b0", Tree: TemplatePower(1), User: testUser, Password: testPass})
	if err != nil {
		t.Fatal(err)
	}
	const p = "/redfish/v1/Chassis/Enclosure/Power"
	if _, ch := call(t, b, "GET", "/redfish/v1/Chassis/Enclosure", ""); mustJSON(ch["Power"]) != `{"@odata.id":"`+p+`"}` {
		t.Fatalf("chassis Power link = %v", ch["Power"])
	}
	_, pw := call(t, b, "GET", p, "")
	ctl := pw["PowerControl"].([]any)[0].(map[string]any)
	ctl["PowerLimit"] = map[string]any{"LimitInWatts": 500}
	if code, _ := call(t, b, "PATCH", p, mustJSON(map[string]any{"PowerControl": []any{ctl}})); code != 200 {
		t.Fatalf("PATCH: %d", code)
	}
	_, pw = call(t, b, "GET", p, "")
	if got := mustJSON(pw["PowerControl"].([]any)[0].(map[string]any)["PowerLimit"]); got != `{"LimitInWatts":500}` {
		t.Errorf("PowerLimit after PATCH = %s", got)
	}
}

// TestOnPowerAndReset: Reset presses the power button without credentials
// and OnPower hears each change of PowerState, not a reset that changes
// nothing.
func TestOnPowerAndReset(t *testing.T) {
	var got []string
	b, err := New(Config{Xname: "x3000c0s1b0", Tree: Template(1), OnPower: func(sys, state string) {
		got = append(got, sys+" "+state)
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range []string{"ForceOff", "ForceOff", "On"} {
		if err := b.Reset("/redfish/v1/Systems/Node0", rt); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Reset("/redfish/v1/Systems/Node0", "Bogus"); err == nil {
		t.Error("an unknown reset type was accepted")
	}
	want := []string{"/redfish/v1/Systems/Node0 Off", "/redfish/v1/Systems/Node0 On"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("OnPower heard %v, want %v", got, want)
	}
}
