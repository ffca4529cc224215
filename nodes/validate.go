package nodes

import (
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"slices"
	"strings"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/nodes/wire"
)

// nameRE is what a profile or group name may be: an HSM group label.
var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_.:-]{0,127}$`)

// set is a validated, normalised declared set, by kind and name.
type set struct {
	nodes    map[string]*wire.ComputeNode
	profiles map[string]*wire.BootProfile
	groups   map[string]*wire.NodeGroup
	order    []wire.Resource // profiles, then groups, then nodes, each by input order
}

// normalise checks every resource alone and the set as a whole, and returns
// it with xnames, MACs and names in canonical form. Every error names the
// resource (kind and name); nothing is applied when there is one.
func normalise(in []wire.Resource) (*set, error) {
	s := &set{nodes: map[string]*wire.ComputeNode{}, profiles: map[string]*wire.BootProfile{}, groups: map[string]*wire.NodeGroup{}}
	var errs []string
	bad := func(kind, name, format string, args ...any) {
		errs = append(errs, fmt.Sprintf("%s %q: %s", kind, name, fmt.Sprintf(format, args...)))
	}
	var nodes, profiles, groups []wire.Resource
	for i, r := range in {
		switch {
		case r.Kind == wire.KindComputeNode && r.ComputeNode != nil:
			n := *r.ComputeNode
			if err := normaliseNode(&n); err != nil {
				bad(r.Kind, r.ComputeNode.Xname, "%v", err)
				continue
			}
			if s.nodes[n.Xname] != nil {
				bad(r.Kind, n.Xname, "declared twice")
				continue
			}
			s.nodes[n.Xname] = &n
			nodes = append(nodes, wire.Resource{Kind: r.Kind, ComputeNode: &n})
		case r.Kind == wire.KindBootProfile && r.BootProfile != nil:
			p := *r.BootProfile
			p.ID, p.LastUpdated, p.Name = "", nil, strings.TrimSpace(p.Name)
			if !nameRE.MatchString(p.Name) {
				bad(r.Kind, p.Name, "name must match %s", nameRE)
				continue
			}
			if _, err := userData(&p); err != nil {
				bad(r.Kind, p.Name, "%v", err)
				continue
			}
			if s.profiles[p.Name] != nil {
				bad(r.Kind, p.Name, "declared twice")
				continue
			}
			s.profiles[p.Name] = &p
			profiles = append(profiles, wire.Resource{Kind: r.Kind, BootProfile: &p})
		case r.Kind == wire.KindNodeGroup && r.NodeGroup != nil:
			g := *r.NodeGroup
			if err := normaliseGroup(&g); err != nil {
				bad(r.Kind, g.Name, "%v", err)
				continue
			}
			if s.groups[g.Name] != nil {
				bad(r.Kind, g.Name, "declared twice")
				continue
			}
			s.groups[g.Name] = &g
			groups = append(groups, wire.Resource{Kind: r.Kind, NodeGroup: &g})
		default:
			errs = append(errs, fmt.Sprintf("resource %d: unknown kind %q or no body", i+1, r.Kind))
		}
	}
	errs = append(errs, s.checkMACs()...)
	s.order = slices.Concat(profiles, groups, nodes)
	if len(errs) > 0 {
		return nil, invalid(errs)
	}
	return s, nil
}

// checkMACs refuses a MAC (boot or BMC) used by two nodes, or twice by
// one, and a NID given to two nodes.
func (s *set) checkMACs() []string {
	var errs []string
	seen := map[string]string{}
	nids := map[int]string{}
	for _, x := range sortedKeys(s.nodes) {
		n := s.nodes[x]
		if other, ok := nids[n.NID]; ok && n.NID > 0 {
			errs = append(errs, fmt.Sprintf("%s %q: nid %d is also given to %s", wire.KindComputeNode, x, n.NID, other))
		}
		nids[n.NID] = x
		for i, m := range []string{n.BootMAC, n.BMCMAC} {
			if m == "" {
				continue
			}
			owner := x // the boot MAC's; the BMC MAC's is the BMC, which nodes may share
			if i == 1 {
				owner = bmcOf(x)
			}
			if other, ok := seen[m]; ok && other != owner {
				errs = append(errs, fmt.Sprintf("%s %q: MAC %s is also used by %s", wire.KindComputeNode, x, m, other))
				continue
			}
			seen[m] = owner
		}
	}
	return errs
}

// checkRefs refuses, in the state an apply would leave, a node or group
// naming a boot profile the state lacks, and a group listing a node it
// lacks. Node.groups may name a group that is not declared: it becomes an
// HSM group of those nodes (the example declares none).
func checkRefs(st *State) error {
	var errs []string
	for _, r := range st.resources() {
		switch {
		case r.ComputeNode != nil && r.ComputeNode.BootProfile != "":
			if p := r.ComputeNode.BootProfile; st.Profiles[p] == nil {
				errs = append(errs, fmt.Sprintf("%s %q: unknown boot_profile %q", r.Kind, r.Name(), p))
			}
		case r.NodeGroup != nil:
			if p := r.NodeGroup.BootProfile; p != "" && st.Profiles[p] == nil {
				errs = append(errs, fmt.Sprintf("%s %q: unknown boot_profile %q", r.Kind, r.Name(), p))
			}
			for _, x := range r.NodeGroup.Nodes {
				if st.Nodes[x] == nil {
					errs = append(errs, fmt.Sprintf("%s %q: unknown node %q", r.Kind, r.Name(), x))
				}
			}
		}
	}
	if len(errs) > 0 {
		return invalid(errs)
	}
	return nil
}

// maxErrors caps the errors an invalid set's problem lists.
const maxErrors = 50

// invalid is the ErrInvalid error of a set: the first maxErrors errors.
func invalid(errs []string) error {
	if len(errs) > maxErrors {
		errs = append(errs[:maxErrors:maxErrors], fmt.Sprintf("and %d more", len(errs)-maxErrors))
	}
	return problem.Invalidf("invalid set: %s", strings.Join(errs, "; "))
}

func normaliseNode(n *wire.ComputeNode) error {
	n.ID, n.LastUpdated, n.Observed = "", nil, nil
	x := xname.Normalize(n.Xname)
	if !xname.Valid(x) || xname.TypeOf(x) != xname.Node {
		return fmt.Errorf("xname %q is not a node xname (xXcCsSbBnN)", n.Xname)
	}
	n.Xname = x
	var err error
	if n.BootMAC, err = normaliseMAC("boot_mac", n.BootMAC); err != nil {
		return err
	}
	if n.BMCMAC, err = normaliseMAC("bmc_mac", n.BMCMAC); err != nil {
		return err
	}
	for _, ip := range []struct{ field, v string }{{"management_ip", n.ManagementIP}, {"bmc_ip", n.BMCIP}} {
		if _, err := netip.ParseAddr(ip.v); ip.v != "" && err != nil {
			return fmt.Errorf("%s %q is not an IP address", ip.field, ip.v)
		}
	}
	if n.NID < 0 {
		return fmt.Errorf("nid %d is negative", n.NID)
	}
	if n.BMCCredentialsFile != "" && n.BMCIP == "" && n.BMCMAC == "" {
		return fmt.Errorf("bmc_credentials_file needs bmc_ip or bmc_mac")
	}
	for i, g := range n.Groups {
		if n.Groups[i] = strings.TrimSpace(g); !nameRE.MatchString(n.Groups[i]) {
			return fmt.Errorf("group %q must match %s", g, nameRE)
		}
	}
	slices.Sort(n.Groups)
	n.Groups = slices.Compact(n.Groups)
	if n.Arch != "" {
		n.Arch = normaliseArch(n.Arch)
	}
	return nil
}

// normaliseArch spells an architecture as HSM does (X86, ARM, ...).
func normaliseArch(a string) string {
	switch strings.ToLower(a) {
	case "x86", "x86_64", "amd64":
		return "X86"
	case "arm", "arm64", "aarch64":
		return "ARM"
	case "other":
		return "Other"
	case "unknown":
		return "UNKNOWN"
	}
	return a
}

func normaliseGroup(g *wire.NodeGroup) error {
	g.ID, g.LastUpdated, g.Name = "", nil, strings.TrimSpace(g.Name)
	if !nameRE.MatchString(g.Name) {
		return fmt.Errorf("name must match %s", nameRE)
	}
	for i, x := range g.Nodes {
		n := xname.Normalize(x)
		if !xname.Valid(n) || xname.TypeOf(n) != xname.Node {
			return fmt.Errorf("node %q is not a node xname", x)
		}
		g.Nodes[i] = n
	}
	slices.Sort(g.Nodes)
	g.Nodes = slices.Compact(g.Nodes)
	return nil
}

// normaliseMAC returns a MAC as lowercase colon-separated hex.
func normaliseMAC(field, m string) (string, error) {
	if m == "" {
		return "", nil
	}
	hw, err := net.ParseMAC(m)
	if err != nil || len(hw) != 6 {
		return "", fmt.Errorf("%s %q is not a MAC address", field, m)
	}
	return hw.String(), nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
