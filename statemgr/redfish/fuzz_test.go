package redfish

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/hmsuite/hms/statemgr/hsm"
)

// systemSeed is a cut-down public-rackmount1 ComputerSystem.
const systemSeed = `{"@odata.id":"/redfish/v1/Systems/437XR1138R2","Id":"437XR1138R2","PowerState":"On",
"Status":{"State":"Enabled"},"Processors":{"@odata.id":"/redfish/v1/Systems/437XR1138R2/Processors"},
"Memory":{"@odata.id":"/redfish/v1/Systems/437XR1138R2/Memory"},
"EthernetInterfaces":{"@odata.id":"/redfish/v1/Systems/437XR1138R2/EthernetInterfaces"},
"Links":{"Chassis":[{"@odata.id":"/redfish/v1/Chassis/1U"}]},
"Actions":{"#ComputerSystem.Reset":{"target":"/redfish/v1/Systems/437XR1138R2/Actions/ComputerSystem.Reset",
"ResetType@Redfish.AllowableValues":["On","ForceOff"]}}}`

func seed(f *testing.F, mockupPath string) {
	b, err := os.ReadFile(filepath.Join(mockupDir, filepath.FromSlash(mockupPath), "index.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
}

func FuzzParseExtras(f *testing.F) {
	// Small seeds: the fuzzer stalls on whole mockup resources (several KB),
	// which the walk tests decode anyway.
	f.Add([]byte(systemSeed))
	f.Add([]byte(`{"InterfaceEnabled":true,"MACAddress":"AA:BB:CC:DD:EE:FE"}`))
	f.Add([]byte(`{"Actions":{"#ComputerSystem.Reset":[]}}`))
	f.Add([]byte(`{"Links":{"Chassis":{"@odata.id":"/x"}}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		x, err := parseExtras(raw, "#ComputerSystem.Reset")
		if err != nil {
			return
		}
		if !json.Valid(raw) {
			t.Fatalf("accepted invalid JSON %q", raw)
		}
		for name, link := range x.Links {
			if link == "" {
				t.Errorf("link %s present with empty @odata.id", name)
			}
		}
	})
}

func FuzzParsePower(f *testing.F) {
	seed(f, "public-rackmount1/Chassis/1U/Power")
	seed(f, "public-bladed/Chassis/MultiBladeEncl/Power")
	f.Add([]byte(`{"PowerControl":{"Name":"one","PowerCapacityWatts":"800"}}`))
	f.Add([]byte(`{"PowerControl":null}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		pcs, err := parsePower(raw)
		if err != nil {
			return
		}
		if _, err := json.Marshal(pcs); err != nil {
			t.Fatalf("cannot re-encode %+v: %v", pcs, err)
		}
	})
}

// FuzzWalkSystem feeds arbitrary bytes as the ComputerSystem of an otherwise
// valid BMC: the walk must end with a known status and close every body.
func FuzzWalkSystem(f *testing.F) {
	f.Add([]byte(systemSeed))
	f.Add([]byte(`{"@odata.id":"/redfish/v1/Systems/437XR1138R2","Processors":{"@odata.id":"/nowhere"}}`))
	f.Add([]byte(`{"PowerState":7}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		m := newMockup("public-rackmount1")
		m.raw = func(p string) ([]byte, bool) { return raw, p == "/redfish/v1/Systems/437XR1138R2" }
		c := &bodyCounter{base: inProcess{m}}
		res, _ := Walk(t.Context(), Endpoint{ID: "x3000c0s1b0", FQDN: "bmc", Scheme: "http"},
			Options{HTTPClient: &http.Client{Transport: c}})
		switch res.Status {
		case StatusOK, StatusDecodeFailed, StatusHTTPsGetFailed, StatusChildVerificationFailed:
		default:
			t.Errorf("unexpected status %s (errors %q)", res.Status, res.Errors)
		}
		if c.closed != c.opened {
			t.Errorf("%d bodies opened, %d closed", c.opened, c.closed)
		}
	})
}

func FuzzParsePowerState(f *testing.F) {
	seed(f, "public-rackmount1/Systems/437XR1138R2")
	f.Add([]byte(`{"PowerState":"Off","Status":{"State":"Absent"}}`))
	f.Add([]byte(`{"PowerState":1}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		s, err := parsePowerState(raw)
		if err != nil {
			return
		}
		switch s {
		case hsm.StateOn, hsm.StateOff, hsm.StateEmpty, hsm.StateUnknown:
		default:
			t.Errorf("parsePowerState(%q) = %q", raw, s)
		}
	})
}
