package sim

import (
	"fmt"
	"net"

	"github.com/hmsuite/hms/discovery"
	"github.com/hmsuite/hms/layout/sls"
)

// FirstMountainCabinet is the xname number of the first simulated Mountain
// cabinet (HMS numbers liquid-cooled cabinets from x1000, River from x3000).
const FirstMountainCabinet = 1000

// Shape of a Mountain cabinet: 8 chassis, each with a chassis controller
// (x#c#b0) and 8 blade slots of two node cards (x#c#s{0..7}b{0,1}); the
// sim gives each node card one node (n0).
const (
	MountainChassis = 8
	MountainSlots   = 8
	mtnNodeCards    = 2
)

// Mountain is the Mountain hardware a Sim starts with: Cabinets cabinets
// from x1000, the first Chassis chassis of each (1-8) with their chassis
// controller, and the first Slots blade slots of each chassis (0-8) filled
// with two node cards. Nothing is cabled to a switch: reds finds these
// BMCs by the MACs MEDS derives from their place in the SLS chassis.
type Mountain struct {
	Cabinets, Chassis, Slots int
}

// places lists the BMCs of m: per chassis its controller, then its node
// cards by slot.
func (m Mountain) places() []place {
	var out []place
	for c := range m.Cabinets {
		for ch := range m.Chassis {
			out = append(out, place{kind: chassisBMC, cabinet: FirstMountainCabinet + c, chassis: ch})
			for s := range m.Slots {
				for b := range mtnNodeCards {
					out = append(out, place{kind: mountainNode, cabinet: FirstMountainCabinet + c, chassis: ch, slot: s, bmc: b})
				}
			}
		}
	}
	return out
}

// Validate checks the shape: chassis 1-8 and slots 0-8 per cabinet when
// there are cabinets.
func (m Mountain) Validate() error {
	if m.Cabinets < 0 || m.Cabinets > FirstCabinet-FirstMountainCabinet {
		return fmt.Errorf("%d Mountain cabinets: want 0 to %d: %w", m.Cabinets, FirstCabinet-FirstMountainCabinet, errInvalid)
	}
	if m.Cabinets > 0 && (m.Chassis < 1 || m.Chassis > MountainChassis || m.Slots < 0 || m.Slots > MountainSlots) {
		return fmt.Errorf("Mountain chassis %d, slots %d: want 1-%d chassis and 0-%d slots: %w",
			m.Chassis, m.Slots, MountainChassis, MountainSlots, errInvalid)
	}
	return nil
}

// parseMountain reads a Mountain chassis controller (x#c#b0), node card
// BMC (x#c#s#b#) or node (x#c#s#b#n0) xname of the simulated shape.
func parseMountain(x string) (place, error) {
	p := place{kind: mountainNode}
	n := 0
	if c, _ := fmt.Sscanf(x, "x%dc%ds%db%dn%d", &p.cabinet, &p.chassis, &p.slot, &p.bmc, &n); c < 4 {
		p = place{kind: chassisBMC}
		if c, _ := fmt.Sscanf(x, "x%dc%db%d", &p.cabinet, &p.chassis, &p.bmc); c < 3 || p.bmc != 0 {
			return p, fmt.Errorf("%q is not a Mountain chassis BMC, node card BMC or node xname (x<cab>c<chassis>b0, x<cab>c<chassis>s<slot>b<bmc>[n0]): %w", x, errInvalid)
		}
	}
	if p.cabinet < FirstMountainCabinet || p.cabinet >= FirstCabinet || p.chassis < 0 || p.chassis >= MountainChassis ||
		p.slot < 0 || p.slot >= MountainSlots || p.bmc < 0 || p.bmc >= mtnNodeCards || n != 0 {
		return p, fmt.Errorf("%s: outside the simulated Mountain shape (x%d-x%d, c0-%d, s0-%d, b0-%d, n0): %w",
			x, FirstMountainCabinet, FirstCabinet-1, MountainChassis-1, MountainSlots-1, mtnNodeCards-1, errInvalid)
	}
	if got := p.bmcX(); got != x && (p.kind == chassisBMC || p.nodeX() != x) {
		return p, fmt.Errorf("%q: write it as %s: %w", x, got, errInvalid)
	}
	return p, nil
}

// mountainMAC is the MAC of the Mountain BMC at p: the one MEDS derives
// from its place (prefix 02, as with no MACPrefix in the SLS cabinet), so
// reds knows it for p's xname once SLS has the chassis.
func mountainMAC(p place) (net.HardwareAddr, error) {
	x := p.bmcX()
	for _, e := range discovery.MountainEndpoints("", p.cabinet, p.chassis) {
		if e.Xname == x {
			return net.ParseMAC(e.MAC)
		}
	}
	return nil, fmt.Errorf("%s: MEDS expects no such BMC: %w", x, errInvalid)
}

// mountainChassisHardware is the SLS objects of p's cabinet and chassis.
func mountainChassisHardware(p place) []sls.Hardware {
	return []sls.Hardware{hwOf(sls.Mountain, p.cabinetX(), nil), hwOf(sls.Mountain, p.chassisX(), nil)}
}

// mountainHardware is the SLS objects of the BMC at p: a chassis
// controller, or a node card with its slot and node (NID nid).
func mountainHardware(p place, nid int) []sls.Hardware {
	if p.kind == chassisBMC {
		return []sls.Hardware{hwOf(sls.Mountain, p.bmcX(), nil)}
	}
	return []sls.Hardware{
		hwOf(sls.Mountain, fmt.Sprintf("%ss%d", p.chassisX(), p.slot), nil),
		hwOf(sls.Mountain, p.bmcX(), nil),
		hwOf(sls.Mountain, p.nodeX(), map[string]any{"NID": nid, "Role": "Compute", "Aliases": []string{fmt.Sprintf("nid%06d", nid)}}),
	}
}
