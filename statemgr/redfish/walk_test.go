package redfish

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/statemgr/hsm"
)

var update = flag.Bool("update", false, "rewrite testdata/golden files")

// checkGolden compares got, encoded as indented JSON, with testdata/golden/name.
func checkGolden(t *testing.T, name string, got any) {
	t.Helper()
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	file := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(file, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(b)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", file, diff)
	}
}

func TestWalkMockupsGolden(t *testing.T) {
	for _, tc := range []struct {
		mockup, bmc string
	}{
		{mockup: "public-rackmount1", bmc: "x3000c0s1b0"},
		{mockup: "public-bladed", bmc: "x3000c0s3b0"},
	} {
		t.Run(tc.mockup, func(t *testing.T) {
			m := newMockup(tc.mockup)
			m.user, m.pass = "root", "initial0"
			counter := &bodyCounter{}
			_, client := serve(t, m)
			counter.base = client.Transport
			ep := Endpoint{ID: tc.bmc, FQDN: tc.bmc + ".hmn.example", User: "root", Password: "initial0", Scheme: "http"}
			res, err := Walk(t.Context(), ep, Options{HTTPClient: &http.Client{Transport: counter}})
			if err != nil {
				t.Fatalf("Walk: %v (errors %q)", err, res.Errors)
			}
			checkGolden(t, tc.mockup+".json", res)
			if counter.opened != res.Requests || counter.closed != counter.opened {
				t.Errorf("bodies: %d opened, %d closed, %d requests counted", counter.opened, counter.closed, res.Requests)
			}
		})
	}
}

// TestWalkRackmount1Facts pins the values other services rely on, so that a
// careless -update cannot hide a regression in them.
func TestWalkRackmount1Facts(t *testing.T) {
	_, client := serve(t, newMockup("public-rackmount1"))
	ep := Endpoint{ID: "x3000c0s1b0", FQDN: "x3000c0s1b0", Scheme: "http"}
	res, err := Walk(t.Context(), ep, Options{HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]hsm.ComponentEndpoint{}
	for _, ce := range res.ComponentEndpoints {
		byID[ce.ID] = ce
	}
	node := byID["x3000c0s1b0n0"]
	if node.RedfishSystemInfo == nil || node.RedfishSystemInfo.Actions == nil {
		t.Fatalf("node endpoint without actions: %+v", node)
	}
	want := &hsm.ResetAction{Target: "/redfish/v1/Systems/437XR1138R2/Actions/ComputerSystem.Reset",
		AllowableValues: []string{"On", "ForceOff", "GracefulShutdown", "GracefulRestart", "ForceRestart", "Nmi", "ForceOn", "PushPowerButton"}}
	if diff := cmp.Diff(want, node.RedfishSystemInfo.Actions.Reset); diff != "" {
		t.Errorf("reset action (-want +got):\n%s", diff)
	}
	if node.RedfishSystemInfo.PowerURL != "/redfish/v1/Chassis/1U/Power" {
		t.Errorf("PowerURL = %q", node.RedfishSystemInfo.PowerURL)
	}
	states := map[string]string{}
	for _, c := range res.Components {
		states[c.ID] = c.State
	}
	for id, st := range map[string]string{"x3000c0s1b0n0": hsm.StateOn, "x3000c0s1b0": hsm.StateReady,
		"x3000c0s1b0n0p0": hsm.StatePopulated, "x3000c0s1b0n0p1": hsm.StateEmpty, "x3000c0s1b0n0d3": hsm.StateEmpty} {
		if states[id] != st {
			t.Errorf("state of %s = %q, want %q", id, states[id], st)
		}
	}
	macs := map[string]string{}
	for _, e := range res.EthernetInterfaces {
		macs[e.ID] = e.ComponentID
	}
	for id, comp := range map[string]string{"12446a3b0411": "x3000c0s1b0n0", "aabbccddee00": "x3000c0s1b0n0",
		"23118a33cfea": "x3000c0s1b0"} {
		if macs[id] != comp {
			t.Errorf("EthernetInterface %s ComponentID = %q, want %q", id, macs[id], comp)
		}
	}
}

func TestWalkFailures(t *testing.T) {
	rackmount := func() *mockup { return newMockup("public-rackmount1") }
	for _, tc := range []struct {
		name     string
		server   func() *mockup
		password string
		want     Status
		missing  []string
	}{
		{name: "wrong password", password: "s3cret-wrong", want: StatusVerificationFailed,
			server: func() *mockup { m := rackmount(); m.user, m.pass = "root", "s3cret-right"; return m }},
		{name: "service root protected too", password: "s3cret-right", want: StatusOK,
			server: func() *mockup { m := rackmount(); m.user, m.pass, m.rootAuth = "root", "s3cret-right", true; return m }},
		{name: "wrong password, service root protected", password: "s3cret-wrong", want: StatusVerificationFailed,
			server: func() *mockup { m := rackmount(); m.user, m.pass, m.rootAuth = "root", "s3cret-right", true; return m }},
		{name: "garbage service root", want: StatusDecodeFailed, server: func() *mockup {
			m := rackmount()
			m.raw = func(p string) ([]byte, bool) { return []byte(`{"RedfishVersion": "1.`), p == "/redfish/v1" }
			return m
		}},
		{name: "garbage system", want: StatusDecodeFailed, server: func() *mockup {
			m := rackmount()
			m.raw = func(p string) ([]byte, bool) {
				return []byte(`<html>oops</html>`), p == "/redfish/v1/Systems/437XR1138R2"
			}
			return m
		}},
		{name: "no EthernetInterfaces link", want: StatusOK, server: func() *mockup {
			m := rackmount()
			m.edit = func(p string, doc map[string]any) map[string]any {
				if p == "/redfish/v1/Systems/437XR1138R2" {
					delete(doc, "EthernetInterfaces")
				}
				return doc
			}
			return m
		}, missing: []string{"/redfish/v1/Systems/437XR1138R2: EthernetInterfaces (no link)"}},
		{name: "EthernetInterfaces and Processors 404", want: StatusOK, server: func() *mockup {
			m := rackmount()
			m.edit = func(p string, doc map[string]any) map[string]any {
				if p == "/redfish/v1/Systems/437XR1138R2/EthernetInterfaces" || p == "/redfish/v1/Systems/437XR1138R2/Processors" {
					return nil
				}
				return doc
			}
			return m
		}, missing: []string{
			"/redfish/v1/Systems/437XR1138R2: EthernetInterfaces (/redfish/v1/Systems/437XR1138R2/EthernetInterfaces: HTTP 404)",
			"/redfish/v1/Systems/437XR1138R2: Processors (/redfish/v1/Systems/437XR1138R2/Processors: HTTP 404)",
		}},
		{name: "no Systems", want: StatusHTTPsGetFailed, server: func() *mockup {
			m := rackmount()
			m.edit = func(p string, doc map[string]any) map[string]any {
				if p == "/redfish/v1/Systems" {
					return nil
				}
				return doc
			}
			return m
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			counter := &bodyCounter{}
			_, client := serve(t, tc.server())
			counter.base = client.Transport
			ep := Endpoint{ID: "x3000c0s1b0", FQDN: "x3000c0s1b0", User: "root", Password: tc.password, Scheme: "http"}
			res, err := Walk(t.Context(), ep, Options{HTTPClient: &http.Client{Transport: counter}})
			if res.Status != tc.want {
				t.Errorf("Status = %s, want %s (errors %q)", res.Status, tc.want, res.Errors)
			}
			if (err == nil) != (tc.want == StatusOK) || (err != nil && !errors.Is(err, problem.ErrUnavailable)) {
				t.Errorf("err = %v for status %s", err, res.Status)
			}
			if tc.password != "" && bytes.Contains([]byte(errText(err, res)), []byte(tc.password)) {
				t.Errorf("password leaked into %q", errText(err, res))
			}
			if diff := cmp.Diff(tc.missing, res.Missing); tc.missing != nil && diff != "" {
				t.Errorf("Missing (-want +got):\n%s", diff)
			}
			if counter.closed != counter.opened {
				t.Errorf("%d bodies opened, %d closed", counter.opened, counter.closed)
			}
		})
	}
}

func errText(err error, res Result) string {
	s, _ := json.Marshal(res)
	if err != nil {
		return err.Error() + string(s)
	}
	return string(s)
}

func TestWalkInvalidEndpoint(t *testing.T) {
	for _, ep := range []Endpoint{
		{ID: "x3000c0s1b0n0", FQDN: "h"},              // a node, not a BMC
		{ID: "nonsense", FQDN: "h"},                   // not an xname
		{ID: "x3000c0s1b0"},                           // no address
		{ID: "x3000c0s1b0", FQDN: "h", Scheme: "ftp"}, // bad scheme
		{ID: "x3000c0s1b0", FQDN: "h/redfish"},        // not host[:port]
		{ID: "x3000c0s1b0", FQDN: "user:pw@h"},        // credentials in the address
	} {
		res, err := Walk(t.Context(), ep, Options{})
		if res.Status != StatusEndpointInvalid || !errors.Is(err, problem.ErrInvalid) {
			t.Errorf("Walk(%+v) = %s, %v; want EndpointInvalid and ErrInvalid", ep, res.Status, err)
		}
		if res.Requests != 0 {
			t.Errorf("Walk(%+v) sent %d requests", ep, res.Requests)
		}
	}
}
