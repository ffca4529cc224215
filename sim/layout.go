package sim

import (
	"encoding/json"
	"fmt"
	"net/netip"

	"github.com/hmsuite/hms/internal/slsgen"
	"github.com/hmsuite/hms/layout/sls"
)

// FirstCabinet is the xname number of the first simulated River cabinet.
const FirstCabinet = 3000

// Shape of the simulated hardware: slsgen's (4 chassis of 16 slots, two
// node BMCs with one node each per slot, a management switch per chassis
// whose ports 1..32 are cabled to the chassis's BMCs), as River cabinets
// x3000, x3001, ...
const (
	slotsPerChassis = slsgen.SlotsPerChassis
	bmcsPerSlot     = slsgen.BMCsPerSlot
	bmcsPerChassis  = slotsPerChassis * bmcsPerSlot
	nodesPerCabinet = slsgen.NodesPerCabinet
)

// place is where device i (0-based) of the simulated machine sits.
type place struct {
	cabinet, chassis, slot, bmc int // slot from 1
	port                        int // switch port from 1
}

func placeOf(i int) place {
	cab, rest := i/nodesPerCabinet, i%nodesPerCabinet
	ch, rest := rest/bmcsPerChassis, rest%bmcsPerChassis
	return place{cabinet: FirstCabinet + cab, chassis: ch, slot: rest/bmcsPerSlot + 1, bmc: rest % bmcsPerSlot, port: rest + 1}
}

func (p place) cabinetX() string { return fmt.Sprintf("x%d", p.cabinet) }
func (p place) chassisX() string { return fmt.Sprintf("x%dc%d", p.cabinet, p.chassis) }
func (p place) switchX() string  { return p.chassisX() + "w1" }
func (p place) bmcX() string     { return fmt.Sprintf("%ss%db%d", p.chassisX(), p.slot, p.bmc) }
func (p place) nodeX() string    { return p.bmcX() + "n0" }
func (p place) portName() string { return fmt.Sprintf("ethernet1/1/%d", p.port) }

// switchAddr is the loopback address of the switch of p's chassis:
// 127.21.<cabinet-3000>.<chassis+1> (the second octet grows past 256 cabinets).
func (p place) switchAddr() netip.Addr {
	c := p.cabinet - FirstCabinet
	return netip.AddrFrom4([4]byte{127, byte(21 + c/256), byte(c % 256), byte(p.chassis + 1)})
}

// hw builds one SLS hardware object.
func hw(x string, extra any) sls.Hardware {
	h := sls.Hardware{Xname: x, Class: sls.River}
	if extra != nil {
		h.ExtraProperties, _ = json.Marshal(extra)
	}
	return h
}

// chassisHardware is the SLS objects of a chassis: cabinet, chassis and its
// management switch (v2c at swAddr, community public).
func chassisHardware(p place, swAddr string) []sls.Hardware {
	return []sls.Hardware{
		hw(p.cabinetX(), nil),
		hw(p.chassisX(), nil),
		hw(p.switchX(), map[string]any{"IP4addr": swAddr, "Brand": "Dell", "Model": "S3048-ON",
			"Aliases": []string{fmt.Sprintf("sw-sim-%d-%d", p.cabinet, p.chassis)}}),
	}
}

// nodeHardware is the SLS objects of device p with NID nid: its slot, BMC,
// node and the switch connector cabling the BMC.
func nodeHardware(p place, nid int) []sls.Hardware {
	return []sls.Hardware{
		hw(fmt.Sprintf("%ss%d", p.chassisX(), p.slot), nil),
		hw(p.bmcX(), map[string]any{"IP4addr": "DHCPv4", "IP6addr": "DHCPv6"}),
		hw(p.nodeX(), map[string]any{"NID": nid, "Role": "Compute", "Aliases": []string{fmt.Sprintf("nid%06d", nid)}}),
		hw(fmt.Sprintf("%sj%d", p.switchX(), p.port), map[string]any{"NodeNics": []string{p.bmcX()}, "VendorName": p.portName()}),
	}
}

// NodesPerCabinet is how many nodes a simulated River cabinet holds.
const NodesPerCabinet = nodesPerCabinet
