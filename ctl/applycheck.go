package ctl

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"regexp"

	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/nodes/wire"
)

// validate checks what can be checked of the whole declared set without
// asking the daemon: identities, xnames, MACs and IPs, duplicates across
// all files. It normalises xnames and MACs in place (x1000c0s0b0n00 is
// x1000c0s0b0n0, 02:AA:... is 02:aa:...), as HSM and BSS store them.
func validate(ds []decl) []fileError {
	v := validator{first: map[string]pos{}, owner: map[string]string{}}
	for i := range ds {
		d := &ds[i]
		switch {
		case d.res.ComputeNode != nil:
			v.node(d)
		case d.res.BootProfile != nil:
			v.profile(d)
		case d.res.NodeGroup != nil:
			v.group(d)
		}
	}
	return v.errs
}

type validator struct {
	// first is where a key ("ComputeNode/x1000c0s0b0n0", "mac/02:..") was
	// first declared; owner is what declared it, for the message.
	first map[string]pos
	owner map[string]string
	errs  []fileError
}

func (v *validator) errorf(at pos, format string, a ...any) {
	v.errs = append(v.errs, fileError{at: at, msg: fmt.Sprintf(format, a...)})
}

// unique records key as declared at at by who; a second declaration is an
// error saying where the first one was.
func (v *validator) unique(key, what, who string, at pos) {
	if first, ok := v.first[key]; ok {
		v.errorf(at, "%s already used by %s at %s", what, v.owner[key], first)
		return
	}
	v.first[key], v.owner[key] = at, who
}

func (v *validator) node(d *decl) {
	n := d.res.ComputeNode
	if n.Xname == "" {
		v.errorf(d.at, "ComputeNode: missing xname")
		return
	}
	x, err := xname.Parse(n.Xname)
	switch {
	case err != nil:
		v.errorf(d.where("xname"), "ComputeNode: %v", err)
	case x.Type() != xname.Node:
		v.errorf(d.where("xname"), "ComputeNode: xname %q is a %s, not a Node", n.Xname, x.Type())
	default:
		n.Xname = x.String()
		v.unique("node/"+n.Xname, "xname "+n.Xname, "another ComputeNode", d.where("xname"))
	}
	who := "ComputeNode " + n.Xname
	if n.ID != "" && xname.Normalize(n.ID) != n.Xname {
		v.errorf(d.where("id"), "%s: id %q is not its xname", who, n.ID)
	}
	for _, f := range []struct {
		name string
		val  *string
	}{{"boot_mac", &n.BootMAC}, {"bmc_mac", &n.BMCMAC}} {
		if *f.val == "" {
			continue
		}
		mac, err := net.ParseMAC(*f.val)
		if err != nil || len(mac) != 6 {
			v.errorf(d.where(f.name), "%s: %s %q is not a MAC address (want 02:00:00:00:10:00)", who, f.name, *f.val)
			continue
		}
		*f.val = mac.String()
		v.unique("mac/"+*f.val, "MAC "+*f.val, who+" "+f.name, d.where(f.name))
	}
	for _, f := range []struct{ name, val string }{{"management_ip", n.ManagementIP}, {"bmc_ip", n.BMCIP}} {
		if f.val == "" {
			continue
		}
		ip, err := netip.ParseAddr(f.val)
		if err != nil || ip.Zone() != "" {
			v.errorf(d.where(f.name), "%s: %s %q is not an IP address", who, f.name, f.val)
			continue
		}
		v.unique("ip/"+ip.String(), "IP address "+ip.String(), who+" "+f.name, d.where(f.name))
	}
	if n.BMCCredentialsFile != "" && n.BMCIP == "" && n.BMCMAC == "" {
		v.errorf(d.where("bmc_credentials_file"), "%s: bmc_credentials_file needs bmc_ip or bmc_mac", who)
	}
	v.names(d, "groups", n.Groups)
	if n.BootProfile != "" {
		v.name(d, "boot_profile", n.BootProfile)
	}
}

// named checks the name of a profile or group: given, valid, unique in its
// kind. It reports whether the rest is worth checking.
func (v *validator) named(d *decl, name string) bool {
	if name == "" {
		v.errorf(d.at, "%s: missing name", d.res.Kind)
		return false
	}
	if !v.name(d, "name", name) {
		return false
	}
	v.unique(d.res.Kind+"/"+name, "name "+name, "another "+d.res.Kind, d.where("name"))
	return true
}

func (v *validator) profile(d *decl) {
	p := d.res.BootProfile
	if !v.named(d, p.Name) {
		return
	}
	for _, f := range []struct{ name, val string }{{"image_url", p.ImageURL}, {"kernel_url", p.KernelURL}, {"initrd_url", p.InitrdURL}} {
		if f.val == "" {
			continue
		}
		if u, err := url.Parse(f.val); err != nil || u.Scheme == "" {
			v.errorf(d.where(f.name), "BootProfile %s: %s %q is not an absolute URL", p.Name, f.name, f.val)
		}
	}
}

func (v *validator) group(d *decl) {
	g := d.res.NodeGroup
	if !v.named(d, g.Name) {
		return
	}
	if g.BootProfile != "" {
		v.name(d, "boot_profile", g.BootProfile)
	}
	seen := map[string]bool{}
	for i, m := range g.Nodes {
		x, err := xname.Parse(m)
		if err != nil || x.Type() != xname.Node {
			v.errorf(d.where("nodes"), "NodeGroup %s: member %q is not a node xname", g.Name, m)
			continue
		}
		g.Nodes[i] = x.String()
		if seen[x.String()] {
			v.errorf(d.where("nodes"), "NodeGroup %s: member %s listed twice", g.Name, x)
		}
		seen[x.String()] = true
	}
}

// validName is what a profile or group name may be: HSM group labels and
// BSS names both take it.
// (The nodes daemon checks the same; here the error gets its line.)
var validName = regexp.MustCompile(`^[a-z0-9][a-z0-9_.:-]{0,127}$`)

// name checks the name in field; it reports whether it is valid.
func (v *validator) name(d *decl, field, name string) bool {
	if validName.MatchString(name) {
		return true
	}
	v.errorf(d.where(field), "%s: %s %q is not a name (lowercase letters, digits, '_', '.', ':', '-', starting with a letter or digit)", d.res.Kind, field, name)
	return false
}

// names checks a list of group names: all valid, none twice.
func (v *validator) names(d *decl, field string, names []string) {
	seen := map[string]bool{}
	for _, g := range names {
		if !v.name(d, field, g) {
			continue
		}
		if seen[g] {
			v.errorf(d.where(field), "%s %s: %s: %s listed twice", d.res.Kind, d.res.Name(), field, g)
		}
		seen[g] = true
	}
}

// references lists the boot profiles the declared set names but does not
// define, with where each is first named. Groups are not checked: a node's
// groups are HSM group labels, and the daemon creates those a NodeGroup
// does not define (as the example file relies on).
func references(ds []decl) (names []string, at map[string]pos) {
	defined := map[string]bool{}
	for _, d := range ds {
		if p := d.res.BootProfile; p != nil {
			defined[p.Name] = true
		}
	}
	at = map[string]pos{}
	ref := func(name string, where pos) {
		if name == "" || defined[name] {
			return
		}
		if _, ok := at[name]; !ok {
			names = append(names, name)
			at[name] = where
		}
	}
	for _, d := range ds {
		switch {
		case d.res.ComputeNode != nil:
			ref(d.res.ComputeNode.BootProfile, d.where("boot_profile"))
		case d.res.NodeGroup != nil:
			ref(d.res.NodeGroup.BootProfile, d.where("boot_profile"))
		}
	}
	return names, at
}

// resources are the wire resources of ds, in order.
func resources(ds []decl) []wire.Resource {
	out := make([]wire.Resource, len(ds))
	for i, d := range ds {
		out[i] = d.res
	}
	return out
}
