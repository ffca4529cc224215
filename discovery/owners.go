package discovery

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/hmsuite/hms/ipxe/lease"
)

// Node NICs. A lease event or an unnamed HSM interface is not always a
// BMC's: nodes' NICs get addresses too, and HSM names them from its walk
// of the node's BMC (a ComputerSystem's EthernetInterfaces), not from a
// switch port. Discovery geolocates only what can be a BMC:
//   - a lease to a network-booting client (PXE or UEFI HTTP boot: option 60
//     or 93) is a node's, never a BMC's: not queued;
//   - a MAC HSM already places under a component that is not a BMC is
//     dropped before any switch is walked;
//   - a MAC on no switch is deferred, not failed: HSM is asked again every
//     RetryMin (HSM's walk of its BMC may still be on its way) and the
//     switches on the usual backoff; only after UnplacedGrace is it
//     reported in /v1/unknown, counted and logged.

// maxLookup bounds the MACs asked of HSM in one request.
const maxLookup = 100

// netBooting reports whether ev went to a network-booting client: PXE and
// UEFI HTTP boot firmware name themselves in option 60 and send option 93
// (client architecture); a BMC's DHCP client does neither.
func netBooting(ev lease.Event) bool {
	return ev.Arch != "" || strings.HasPrefix(ev.VendorClass, "PXEClient") || strings.HasPrefix(ev.VendorClass, "HTTPClient")
}

// owned is what HSM says of one MAC: the component it is placed under when
// that is not a BMC ("" otherwise), or why HSM could not say.
type owned struct {
	owner string
	err   error
}

// lookupOwners asks HSM, in one request, for the components macs are
// placed under; a MAC HSM places under a BMC, or under nothing, has no
// owner (it may be ours, pointed at its BMC before a registration failed).
func (s *Service) lookupOwners(ctx context.Context, macs []string) []owned {
	out := make([]owned, len(macs))
	q := url.Values{}
	for _, m := range macs {
		if _, err := net.ParseMAC(m); err == nil {
			q.Add("MACAddress", m)
		}
	}
	if len(q) == 0 {
		return out
	}
	eis, err := s.cfg.HSM.EthernetInterfaces(ctx, q)
	if err != nil {
		err = stepErr(ReasonHSM, fmt.Errorf("hsm: interfaces of %d MACs: %w", len(q["MACAddress"]), err))
		for i := range out {
			out[i].err = err
		}
		return out
	}
	by := make(map[string]string, len(eis))
	for _, ei := range eis {
		if ei.ComponentID != "" && !isBMC(ei.ComponentID) {
			by[lease.NormalizeMAC(ei.MACAddress)] = ei.ComponentID
		}
	}
	for i, m := range macs {
		out[i].owner = by[m]
	}
	return out
}

// ownerOf returns the component HSM places mac under when that is not a
// BMC (a node's NIC): such a MAC is none of discovery's business. Lookups
// of many MACs at once share requests.
func (s *Service) ownerOf(ctx context.Context, mac string) (string, error) {
	o, err := s.owners.call(ctx, mac)
	if err != nil {
		return "", err
	}
	return o.owner, o.err
}

// dropPlaced asks HSM about every MAC left on no switch and drops those it
// now places under a node (its BMC's walk named them).
func (s *Service) dropPlaced(ctx context.Context) {
	s.mu.Lock()
	var macs []string
	for mac, u := range s.unknown {
		if u.Reason == ReasonNotOnSwitch && !s.running[mac] {
			macs = append(macs, mac)
		}
	}
	s.mu.Unlock()
	for len(macs) > 0 {
		n := min(len(macs), maxLookup)
		for i, o := range s.lookupOwners(ctx, macs[:n]) {
			if o.err != nil {
				s.pollFailed(ctx, "hsm", o.err)
				return
			}
			if o.owner != "" {
				s.placedByHSM(macs[i], o.owner)
			}
		}
		macs = macs[n:]
	}
}

// placedByHSM drops mac, waiting for a retry, that HSM places under owner.
func (s *Service) placedByHSM(mac, owner string) {
	s.mu.Lock()
	if s.unknown[mac] == nil || s.running[mac] {
		s.mu.Unlock()
		return
	}
	delete(s.unknown, mac)
	delete(s.jobs, mac)
	delete(s.logged, mac)
	s.mu.Unlock()
	s.log.Info("mac_placed_by_hsm", "mac", mac, "component", owner)
	if s.cfg.Done != nil {
		s.cfg.Done(Outcome{MAC: mac, Xname: owner})
	}
}
