package redfish

import (
	"net/http"
	"testing"

	"github.com/hmsuite/hms/statemgr/hsm"
)

func TestPowerState(t *testing.T) {
	const sys = "/redfish/v1/Systems/437XR1138R2"
	setPower := func(ps string, absent bool) func(string, map[string]any) map[string]any {
		return func(p string, doc map[string]any) map[string]any {
			if p == sys {
				doc["PowerState"] = ps
				if absent {
					doc["Status"] = map[string]any{"State": "Absent"}
				}
			}
			return doc
		}
	}
	for _, tc := range []struct {
		name       string
		edit       func(string, map[string]any) map[string]any
		raw        []byte
		odataID    string
		password   string
		wantState  string
		wantStatus Status
	}{
		{name: "on", odataID: sys, wantState: hsm.StateOn, wantStatus: StatusOK},
		{name: "off", odataID: sys, edit: setPower("Off", false), wantState: hsm.StateOff, wantStatus: StatusOK},
		{name: "powering on", odataID: sys, edit: setPower("PoweringOn", false), wantState: hsm.StateOff, wantStatus: StatusOK},
		{name: "absent", odataID: sys, edit: setPower("On", true), wantState: hsm.StateEmpty, wantStatus: StatusOK},
		{name: "wrong password", odataID: sys, password: "bad-pass", wantState: hsm.StateUnknown, wantStatus: StatusVerificationFailed},
		{name: "garbage", odataID: sys, raw: []byte(`{"PowerState":`), wantState: hsm.StateUnknown, wantStatus: StatusDecodeFailed},
		{name: "no such system", odataID: "/redfish/v1/Systems/nope", wantState: hsm.StateUnknown, wantStatus: StatusHTTPsGetFailed},
		{name: "not a redfish path", odataID: "/etc/passwd", wantState: hsm.StateUnknown, wantStatus: StatusEndpointInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMockup("public-rackmount1")
			m.user, m.pass, m.rootAuth = "root", "good-pass", true
			m.edit = tc.edit
			if tc.raw != nil {
				m.raw = func(p string) ([]byte, bool) { return tc.raw, p == sys }
			}
			c := &bodyCounter{base: inProcess{m}}
			ep := Endpoint{ID: "x3000c0s1b0", FQDN: "bmc", User: "root", Password: cmpOr(tc.password, "good-pass"), Scheme: "http"}
			state, status, err := PowerState(t.Context(), ep, Options{HTTPClient: &http.Client{Transport: c}}, tc.odataID)
			if state != tc.wantState || status != tc.wantStatus || (err == nil) != (status == StatusOK) {
				t.Errorf("PowerState = %s, %s, %v; want %s, %s", state, status, err, tc.wantState, tc.wantStatus)
			}
			if c.opened > 1 || c.closed != c.opened {
				t.Errorf("%d requests, %d bodies closed; want at most 1, all closed", c.opened, c.closed)
			}
		})
	}
}
