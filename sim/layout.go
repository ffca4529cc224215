package sim

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"

	"github.com/gosnmp/gosnmp"

	"github.com/hmsuite/hms/internal/slsgen"
	"github.com/hmsuite/hms/internal/snmpsim"
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

// placeKind is what sits at a place.
type placeKind uint8

const (
	// riverNode is a River node BMC cabled to its chassis's switch.
	riverNode placeKind = iota
	// mountainNode is a node card BMC in a Mountain blade (mountain.go).
	mountainNode
	// chassisBMC is a Mountain chassis controller: no node of its own.
	chassisBMC
)

// place is where a simulated BMC sits.
type place struct {
	kind                        placeKind
	cabinet, chassis, slot, bmc int // River slots from 1, Mountain from 0
	port                        int // River: switch port from 1
}

func placeOf(i int) place {
	cab, rest := i/nodesPerCabinet, i%nodesPerCabinet
	ch, rest := rest/bmcsPerChassis, rest%bmcsPerChassis
	return place{cabinet: FirstCabinet + cab, chassis: ch, slot: rest/bmcsPerSlot + 1, bmc: rest % bmcsPerSlot, port: rest + 1}
}

func (p place) cabinetX() string { return fmt.Sprintf("x%d", p.cabinet) }
func (p place) chassisX() string { return fmt.Sprintf("x%dc%d", p.cabinet, p.chassis) }
func (p place) switchX() string  { return p.chassisX() + "w1" }
func (p place) portName() string { return fmt.Sprintf("ethernet1/1/%d", p.port) }

func (p place) bmcX() string {
	if p.kind == chassisBMC {
		return p.chassisX() + "b0"
	}
	return fmt.Sprintf("%ss%db%d", p.chassisX(), p.slot, p.bmc)
}

// nodeX is the BMC's one node ("" for a chassis controller).
func (p place) nodeX() string {
	if p.kind == chassisBMC {
		return ""
	}
	return p.bmcX() + "n0"
}

// switchAddr is the loopback address of the switch of p's chassis:
// 127.21.<cabinet-3000>.<chassis+1> (the second octet grows past 256 cabinets).
func (p place) switchAddr() netip.Addr {
	c := p.cabinet - FirstCabinet
	return netip.AddrFrom4([4]byte{127, byte(21 + c/256), byte(c % 256), byte(p.chassis + 1)})
}

// hw builds one River SLS hardware object.
func hw(x string, extra any) sls.Hardware { return hwOf(sls.River, x, extra) }

// hwOf builds one SLS hardware object of class c.
func hwOf(c sls.Class, x string, extra any) sls.Hardware {
	h := sls.Hardware{Xname: x, Class: c}
	if extra != nil {
		h.ExtraProperties, _ = json.Marshal(extra)
	}
	return h
}

// chassisHardware is the SLS objects of a chassis: cabinet, chassis and,
// River, its management switch at swAddr: v2c (reds' community) when v3
// has no name, else v3 user v3.
func chassisHardware(p place, swAddr string, v3 snmpsim.User) []sls.Hardware {
	if p.kind != riverNode {
		return mountainChassisHardware(p)
	}
	props := map[string]any{"IP4addr": swAddr, "Brand": "Dell", "Model": "S3048-ON",
		"Aliases": []string{fmt.Sprintf("sw-sim-%d-%d", p.cabinet, p.chassis)}}
	maps.Copy(props, switchSNMP(v3))
	return []sls.Hardware{hw(p.cabinetX(), nil), hw(p.chassisX(), nil), hw(p.switchX(), props)}
}

// switchSNMP is a switch's SNMPv3 credentials as CSM's SLS holds them and
// reds reads them (SNMPUsername, SNMPAuthProtocol, ...). The passwords are
// written as they are: a site writes vault:// references there and gives
// reds -snmp-secrets-file, which the sim cannot do for a running suite.
func switchSNMP(u snmpsim.User) map[string]any {
	if u.Name == "" {
		return nil
	}
	out := map[string]any{"SNMPUsername": u.Name, "SNMPAuthProtocol": u.AuthProtocol.String(), "SNMPAuthPassword": u.AuthPassphrase}
	if u.PrivProtocol != 0 && u.PrivProtocol != gosnmp.NoPriv { // none: reds walks authNoPriv
		out["SNMPPrivProtocol"], out["SNMPPrivPassword"] = u.PrivProtocol.String(), u.PrivPassphrase
	}
	return out
}

// nodeHardware is the SLS objects of device p with NID nid: its slot, BMC,
// node and, River, the switch connector cabling the BMC.
func nodeHardware(p place, nid int) []sls.Hardware {
	if p.kind != riverNode {
		return mountainHardware(p, nid)
	}
	return []sls.Hardware{
		hw(fmt.Sprintf("%ss%d", p.chassisX(), p.slot), nil),
		hw(p.bmcX(), map[string]any{"IP4addr": "DHCPv4", "IP6addr": "DHCPv6"}),
		hw(p.nodeX(), map[string]any{"NID": nid, "Role": "Compute", "Aliases": []string{fmt.Sprintf("nid%06d", nid)}}),
		hw(fmt.Sprintf("%sj%d", p.switchX(), p.port), map[string]any{"NodeNics": []string{p.bmcX()}, "VendorName": p.portName()}),
	}
}

// NodesPerCabinet is how many nodes a simulated River cabinet holds.
const NodesPerCabinet = nodesPerCabinet
