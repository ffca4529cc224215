package inventory

import (
	"encoding/json"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/redfish"
)

// TestDiscoveryWalksTogetherStoreTheSame: BMCs walked at once, whose
// outcomes are group-committed, leave the same components, interfaces,
// endpoints and inventory as the same BMCs walked one at a time.
func TestDiscoveryWalksTogetherStoreTheSame(t *testing.T) {
	var bmcs []string
	for s := range 6 {
		bmcs = append(bmcs, fmt.Sprintf("x3000c0s%db0", s+1))
	}
	walked := func(workers int) map[string]json.RawMessage {
		var out map[string]json.RawMessage
		synctest.Test(t, func(t *testing.T) {
			e := newRFEnv(t, DiscoveryConfig{Workers: workers, BurstWalks: -1})
			var eps []hsm.RedfishEndpoint
			for _, x := range bmcs {
				e.bmc(x, 2, redfishsim.Faults{})
				eps = append(eps, hsm.RedfishEndpoint{ID: x, User: "root", Password: rfPassword, RediscoverOnUpdate: true})
			}
			// A MAC DHCP saw before the walk, which the walk must name.
			e.Must(201, "POST", "/Inventory/EthernetInterfaces", hsm.EthernetInterface{MACAddress: redfishsim.MAC(bmcs[2], "s0:eth1")})
			e.Must(201, "POST", "/Inventory/RedfishEndpoints", hsm.RedfishEndpointList{RedfishEndpoints: eps})
			for _, x := range bmcs {
				if st := e.waitDiscovered(x).DiscoveryInfo.LastDiscoveryStatus; st != string(redfish.StatusOK) {
					t.Fatalf("%s: %s", x, st)
				}
			}
			out = e.inventory()
			var stored hsm.RedfishEndpointList
			_ = json.Unmarshal(e.Must(200, "GET", "/Inventory/RedfishEndpoints", nil), &stored)
			for i := range stored.RedfishEndpoints {
				stored.RedfishEndpoints[i].DiscoveryInfo.LastDiscoveryAttempt = nil
			}
			out["RedfishEndpoints"], _ = json.Marshal(stored)
		})
		return out
	}
	alone, together := walked(1), walked(len(bmcs))
	for name := range alone {
		if diff := cmp.Diff(string(alone[name]), string(together[name])); diff != "" {
			t.Errorf("%s: walked together differs from walked alone (-alone +together):\n%s", name, diff)
		}
	}
}

// inventory returns what HSM shows of the walks (components, endpoints,
// hardware, interfaces), without the clock.
func (e *rfEnv) inventory() map[string]json.RawMessage {
	e.t.Helper()
	got := map[string]json.RawMessage{}
	for name, path := range map[string]string{
		"Components":         "/State/Components",
		"ComponentEndpoints": "/Inventory/ComponentEndpoints",
		"ServiceEndpoints":   "/Inventory/ServiceEndpoints",
		"Hardware":           "/Inventory/Hardware",
		"HardwareByFRU":      "/Inventory/HardwareByFRU",
	} {
		got[name] = e.Must(200, "GET", path, nil)
	}
	var eths []hsm.EthernetInterface
	_ = json.Unmarshal(e.Must(200, "GET", "/Inventory/EthernetInterfaces", nil), &eths)
	for i := range eths {
		eths[i].LastUpdate = time.Time{}
	}
	got["EthernetInterfaces"], _ = json.Marshal(eths)
	return got
}

// TestDiscoveryEndpointDeletedDuringWalk: a walk whose endpoint is deleted
// before it ends stores no inventory for it (no ComponentEndpoints or
// hardware left without their endpoint) and does not bring it back.
func TestDiscoveryEndpointDeletedDuringWalk(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const bmcX = "x3000c0s4b0"
		e := newRFEnv(t, DiscoveryConfig{Timeout: time.Hour})
		e.bmc(bmcX, 1, redfishsim.Faults{Latency: time.Second})
		e.Must(201, "POST", "/Inventory/RedfishEndpoints", hsm.RedfishEndpoint{ID: bmcX, User: "root", Password: rfPassword, RediscoverOnUpdate: true})
		synctest.Wait() // the walk waits on the BMC
		if st := e.endpoint(bmcX).DiscoveryInfo.LastDiscoveryStatus; st != string(redfish.StatusDiscoveryStarted) {
			t.Fatalf("before the delete: %s, want DiscoveryStarted", st)
		}
		e.Must(200, "DELETE", "/Inventory/RedfishEndpoints/"+bmcX, nil)
		time.Sleep(time.Minute) // the walk ends
		synctest.Wait()
		e.Must(404, "GET", "/Inventory/RedfishEndpoints/"+bmcX, nil)
		var ces struct{ ComponentEndpoints []hsm.ComponentEndpoint }
		_ = json.Unmarshal(e.Must(200, "GET", "/Inventory/ComponentEndpoints", nil), &ces)
		var hw []json.RawMessage
		_ = json.Unmarshal(e.Must(200, "GET", "/Inventory/Hardware", nil), &hw)
		if len(ces.ComponentEndpoints) != 0 || len(hw) != 0 {
			t.Errorf("after a walk of a deleted endpoint: %d ComponentEndpoints, %d hardware locations; want none",
				len(ces.ComponentEndpoints), len(hw))
		}
	})
}
