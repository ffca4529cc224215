package redfish

import "github.com/hmsuite/hms/statemgr/hsm"

// FRUs returns the FRUs of every populated location of r, in location order.
func (r *Result) FRUs() []hsm.HWInvByFRU {
	var out []hsm.HWInvByFRU
	for _, l := range r.HWInventory {
		if l.PopulatedFRU != nil {
			out = append(out, *l.PopulatedFRU)
		}
	}
	return out
}
