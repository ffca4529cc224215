package ctl

import (
	"fmt"
	"reflect"

	"gopkg.in/yaml.v3"

	"github.com/hmsuite/hms/nodes/wire"
)

// ochamiNode is one entry of the nodes file OpenCHAMI's `ochami discover
// static` reads (a top-level `nodes:` list), without its interfaces, which
// are read by hand.
type ochamiNode struct {
	Name    string   `json:"name"`
	NID     int      `json:"nid"`
	Xname   string   `json:"xname"`
	BMCMAC  string   `json:"bmc_mac"`
	BMCIP   string   `json:"bmc_ip"`
	BMCFQDN string   `json:"bmc_fqdn"`
	Groups  []string `json:"groups"`
}

// ochamiInterface is one of an ochami node's interfaces, its addresses
// read by hand.
type ochamiInterface struct {
	MACAddr string `json:"mac_addr"`
	Name    string `json:"name"`
	Type    string `json:"type"`
}

type ochamiAddr struct {
	Name   string `json:"name"`
	IPAddr string `json:"ip_addr"`
}

// ochami converts an ochami nodes file into ComputeNodes:
//
//	xname, nid, bmc_mac, bmc_ip, groups -> the same fields
//	interfaces[0].mac_addr               -> boot_mac
//	interfaces[0].ip_addrs[0].ip_addr    -> management_ip
//	name, bmc_fqdn                       -> not kept (no such field)
//
// The other interfaces and addresses are not kept either (a ComputeNode has
// one boot interface); one warning counts the nodes that had some. The groups
// need no NodeGroup: the nodes daemon creates the HSM groups nodes name.
func (p *parser) ochami(n *yaml.Node) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; scalar(k) != "nodes" {
			p.errorf(k, "ochami nodes file: unknown top-level field %q (want nodes:, or kind: for a resource)", scalar(k))
		}
	}
	list := lookup(n, "nodes")
	if list.Kind != yaml.SequenceNode {
		p.errorf(list, "ochami nodes file: nodes: want a list, got %s", describe(list))
		return
	}
	dropped := 0
	for _, item := range list.Content {
		item = deref(item)
		if item.Kind != yaml.MappingNode {
			p.errorf(item, "ochami nodes file: want a node (a mapping), got %s", describe(item))
			continue
		}
		p.ochamiNode(item, &dropped)
	}
	if dropped > 0 {
		p.warns = append(p.warns, fileError{at: p.at(list), msg: fmt.Sprintf("ochami nodes file: only the first interface's MAC "+
			"and its first address are kept (boot_mac, management_ip); nodes with more: %d", dropped)})
	}
}

func (p *parser) ochamiNode(n *yaml.Node, dropped *int) {
	before := len(p.errs)
	var o ochamiNode
	d := decl{at: p.at(n), fld: map[string]pos{}}
	p.fields(n, "ochami node", reflect.ValueOf(&o).Elem(), d.fld, "interfaces")
	c := &wire.ComputeNode{Xname: o.Xname, NID: o.NID, BMCMAC: o.BMCMAC, BMCIP: o.BMCIP, Groups: o.Groups}
	if ifs := lookup(n, "interfaces"); ifs != nil && p.ochamiInterfaces(ifs, c, d) {
		*dropped++
	}
	if len(p.errs) == before {
		d.res = wire.Resource{Kind: wire.KindComputeNode, ComputeNode: c}
		p.decls = append(p.decls, d)
	}
}

// ochamiInterfaces takes the boot MAC and management IP from the first
// interface and its first address, and reports whether it dropped others.
func (p *parser) ochamiInterfaces(ifs *yaml.Node, c *wire.ComputeNode, d decl) bool {
	if ifs.Kind != yaml.SequenceNode {
		p.errorf(ifs, "ochami node: interfaces: want a list, got %s", describe(ifs))
		return false
	}
	dropped := len(ifs.Content) > 1
	for i, item := range ifs.Content {
		item = deref(item)
		if item.Kind != yaml.MappingNode {
			p.errorf(item, "ochami node: interfaces: want a mapping, got %s", describe(item))
			continue
		}
		var in ochamiInterface
		fld := map[string]pos{}
		p.fields(item, "ochami interface", reflect.ValueOf(&in).Elem(), fld, "ip_addrs")
		addrs := lookup(item, "ip_addrs")
		var first string
		firstAt := fld["mac_addr"]
		if addrs != nil {
			first, firstAt, dropped = p.ochamiAddrs(addrs, firstAt, dropped)
		}
		if i == 0 {
			c.BootMAC, c.ManagementIP = in.MACAddr, first
			d.fld["boot_mac"], d.fld["management_ip"] = fld["mac_addr"], firstAt
		}
	}
	return dropped
}

// ochamiAddrs returns the first address of an ip_addrs list and where it
// is (else at), and whether some were dropped.
func (p *parser) ochamiAddrs(addrs *yaml.Node, at pos, dropped bool) (string, pos, bool) {
	if addrs.Kind != yaml.SequenceNode {
		p.errorf(addrs, "ochami node: ip_addrs: want a list, got %s", describe(addrs))
		return "", at, dropped
	}
	var first string
	for j, a := range addrs.Content {
		a = deref(a)
		if a.Kind != yaml.MappingNode {
			p.errorf(a, "ochami node: ip_addrs: want a mapping, got %s", describe(a))
			continue
		}
		var ad ochamiAddr
		fld := map[string]pos{}
		p.fields(a, "ochami address", reflect.ValueOf(&ad).Elem(), fld)
		if j == 0 {
			first = ad.IPAddr
			if f, ok := fld["ip_addr"]; ok {
				at = f
			}
		}
	}
	return first, at, dropped || len(addrs.Content) > 1
}
