// Command meds is Mountain endpoint discovery: for the Mountain and Hill
// cabinets in SLS it pre-registers the chassis controllers' and node cards'
// BMC MACs in HSM, polls each at the address DHCP gave it, gives it its own
// Redfish credentials (and NTP/syslog), registers it in HSM, and retires
// BMCs that are gone and removed from SLS. It is reds's daemon in the
// Mountain role alone (-roles mountain, :8270, meds.db; env HMS_MEDS_*),
// for sites that run the two apart; `hms up` and a plain reds play both
// roles. See docs/discovery.md.
package main

import (
	"github.com/hmsuite/hms/discovery"
	"github.com/hmsuite/hms/internal/cli"
)

func main() { cli.Main("meds", discovery.Command("meds", discovery.MEDSDefaults())) }
