// Package slsgen writes synthetic SLS dumps of any size, for benchmarks and
// load tests. The layout is a row of River cabinets x1000, x1001, ... each with
// 4 chassis of 16 slots; a slot holds 2 node BMCs with one node each, and each
// chassis has a management switch whose connectors j1..j32 are cabled to the
// chassis's BMCs. A 100,000-node system is 782 cabinets and about 357,000
// objects.
package slsgen

import (
	"bufio"
	"fmt"
	"io"
)

// Shape of one cabinet.
const (
	ChassisPerCabinet = 4
	SlotsPerChassis   = 16
	BMCsPerSlot       = 2
	NodesPerCabinet   = ChassisPerCabinet * SlotsPerChassis * BMCsPerSlot
	FirstCabinet      = 1000
	maxCabinet        = 9999
)

// Cabinets returns the number of cabinets a system of n nodes needs.
func Cabinets(n int) int { return (n + NodesPerCabinet - 1) / NodesPerCabinet }

// Write writes a /dumpstate document describing a system of n nodes to w,
// streaming it so that memory use does not grow with n.
func Write(w io.Writer, n int) error {
	if n < 0 || Cabinets(n) > maxCabinet-FirstCabinet+1 {
		return fmt.Errorf("slsgen: %d nodes is out of range 0-%d", n, (maxCabinet-FirstCabinet+1)*NodesPerCabinet)
	}
	g := &gen{w: bufio.NewWriterSize(w, 1<<16)}
	g.printf(`{"Hardware":{`)
	nid := 0
	for cab := 0; nid < n; cab++ {
		nid = g.cabinet(FirstCabinet+cab, nid, n)
	}
	g.printf(`},"Networks":{`)
	g.printf(`"HMN":{"Name":"HMN","FullName":"Hardware Management Network","IPRanges":["10.254.0.0/17"],"Type":"ethernet","ExtraProperties":{"CIDR":"10.254.0.0/17","VlanRange":[4]}},`)
	g.printf(`"NMN":{"Name":"NMN","FullName":"Node Management Network","IPRanges":["10.252.0.0/17"],"Type":"ethernet","ExtraProperties":{"CIDR":"10.252.0.0/17","VlanRange":[2]}}`)
	g.printf("}}\n")
	if g.err != nil {
		return fmt.Errorf("slsgen: %w", g.err)
	}
	if err := g.w.Flush(); err != nil {
		return fmt.Errorf("slsgen: %w", err)
	}
	return nil
}

type gen struct {
	w     *bufio.Writer
	err   error
	first bool
}

func (g *gen) printf(format string, args ...any) {
	if g.err == nil {
		_, g.err = fmt.Fprintf(g.w, format, args...)
	}
}

// obj writes one hardware entry; extra is a JSON object or "".
func (g *gen) obj(x, typ, extra string) {
	if g.first {
		g.printf(",")
	}
	g.first = true
	if extra != "" {
		extra = `,"ExtraProperties":` + extra
	}
	g.printf(`"%s":{"Xname":"%s","Type":"%s","Class":"River"%s}`, x, x, typ, extra)
}

// cabinet writes cabinet number c and its contents, numbering nodes from
// nid+1 and stopping at n nodes; it returns the last NID used.
func (g *gen) cabinet(c, nid, n int) int {
	cab := fmt.Sprintf("x%d", c)
	g.obj(cab, "comptype_cabinet", fmt.Sprintf(`{"Networks":{"cn":{"HMN":{"CIDR":"10.%d.0.0/22","VLan":%d,"MACPrefix":"02"}}}}`, 100+c%100, 1000+c))
	for ch := 0; ch < ChassisPerCabinet && nid < n; ch++ {
		chassis := fmt.Sprintf("%sc%d", cab, ch)
		g.obj(chassis, "comptype_chassis", "")
		sw := chassis + "w1"
		g.obj(sw, "comptype_mgmt_switch", fmt.Sprintf(`{"IP4addr":"10.254.%d.%d","Brand":"Dell","Model":"S3048-ON","SNMPUsername":"testuser","SNMPAuthPassword":"vault://hms-creds/%s","SNMPPrivPassword":"vault://hms-creds/%s","Aliases":["sw-leaf-%d-%d"]}`, c%250, ch+2, sw, sw, c, ch))
		port := 0
		for s := 1; s <= SlotsPerChassis && nid < n; s++ {
			slot := fmt.Sprintf("%ss%d", chassis, s)
			g.obj(slot, "comptype_compmod", "")
			for b := 0; b < BMCsPerSlot && nid < n; b++ {
				bmc := fmt.Sprintf("%sb%d", slot, b)
				port++
				nid++
				g.obj(bmc, "comptype_ncard", `{"IP4addr":"DHCPv4","IP6addr":"DHCPv6"}`)
				g.obj(bmc+"n0", "comptype_node", fmt.Sprintf(`{"NID":%d,"Role":"Compute","Aliases":["nid%06d"]}`, nid, nid))
				g.obj(fmt.Sprintf("%sj%d", sw, port), "comptype_mgmt_switch_connector", fmt.Sprintf(`{"NodeNics":["%s"],"VendorName":"ethernet1/1/%d"}`, bmc, port))
			}
		}
	}
	return nid
}
