// Command reds is endpoint discovery: it places new BMCs (River: DHCP lease
// -> switch port over SNMP -> SLS connector -> xname; Mountain: computed
// from the SLS chassis), gives each its own Redfish credentials, registers
// it in HSM as a RedfishEndpoint, and retires BMCs that are gone and
// removed from SLS. One daemon plays both the REDS and MEDS roles
// (-roles); the meds binary is the same daemon in the Mountain role alone.
// See docs/discovery.md.
package main

import (
	"github.com/hmsuite/hms/discovery"
	"github.com/hmsuite/hms/internal/cli"
)

func main() { cli.Main("reds", discovery.Command("reds", discovery.REDSDefaults())) }
