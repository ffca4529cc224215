package nodes

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/ipxe/bss"
	"github.com/hmsuite/hms/layout/sls"
	"github.com/hmsuite/hms/nodes/wire"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// The marks the daemon leaves in the services on what it owns.
const (
	// OwnerGroup is the HSM group whose members are the nodes the daemon
	// owns; only they are ever deleted from SLS and HSM.
	OwnerGroup = "hms-nodes-owned"
	// OwnerTag tags the HSM groups the daemon owns (OwnerGroup and one per
	// NodeGroup or node group).
	OwnerTag = "hms-nodes"
	// OwnerKey is the BSS meta-data key of the boot parameters the daemon
	// owns (value "nodes").
	OwnerKey = "hms-nodes-owner"
	// defaultRole is the HSM role of a node that declares none.
	defaultRole = "Compute"
	// createState is the HSM State of a component the daemon creates: Off,
	// from which hbtd's first heartbeat may move it to Ready.
	createState = hsm.StateOff
)

// bmcOf is a node's BMC xname (its parent).
func bmcOf(node string) string { return xname.Parent(node) }

// chain is a node's ancestors SLS holds, outermost first: cabinet,
// chassis, slot, BMC.
func chain(node string) []string {
	var out []string
	for p := xname.Parent(node); p != "" && p != "s0"; p = xname.Parent(p) {
		out = append(out, p)
	}
	slices.Reverse(out)
	return out
}

// slsNode is a node's SLS hardware object.
func slsNode(n *wire.ComputeNode, nid int) sls.Hardware {
	props, _ := json.Marshal(sls.NodeProps{NID: nid, Role: roleOf(n), SubRole: n.SubRole})
	return sls.Hardware{Xname: n.Xname, Class: sls.River, ExtraProperties: props}
}

func roleOf(n *wire.ComputeNode) string {
	if n.Role == "" {
		return defaultRole
	}
	return n.Role
}

// hsmComponent is a node's HSM component (State is only used to create it).
func hsmComponent(n *wire.ComputeNode, nid int) hsm.Component {
	enabled := true
	return hsm.Component{ID: n.Xname, Type: string(xname.Node), State: createState, Flag: "OK", Enabled: &enabled,
		Role: roleOf(n), SubRole: n.SubRole, NID: &nid, Arch: n.Arch, Class: string(sls.River)}
}

// macID is HSM's Ethernet interface ID of a MAC: its hex digits.
func macID(mac string) string { return strings.ReplaceAll(mac, ":", "") }

// ethernet lists a node's interfaces: the boot MAC with the management
// IP on the node, the BMC MAC with the BMC IP on the BMC.
func ethernet(n *wire.ComputeNode) []hsm.EthernetInterface {
	var out []hsm.EthernetInterface
	add := func(mac, ip, comp, desc string) {
		if mac == "" {
			return
		}
		ei := hsm.EthernetInterface{ID: macID(mac), MACAddress: mac, ComponentID: comp, Description: desc,
			IPAddresses: []hsm.IPAddressMapping{}}
		if ip != "" {
			ei.IPAddresses = []hsm.IPAddressMapping{{IPAddress: ip}}
		}
		out = append(out, ei)
	}
	add(n.BootMAC, n.ManagementIP, n.Xname, "boot interface (hms nodes)")
	add(n.BMCMAC, n.BMCIP, bmcOf(n.Xname), "BMC interface (hms nodes)")
	return out
}

// endpoint is a node's BMC Redfish endpoint, when it has credentials.
func endpoint(n *wire.ComputeNode, c wire.Credentials) hsm.RedfishEndpoint {
	enabled := true
	host := n.BMCIP
	if host == "" {
		host = bmcOf(n.Xname)
	}
	return hsm.RedfishEndpoint{ID: bmcOf(n.Xname), Type: string(xname.NodeBMC), Hostname: host, FQDN: host,
		IPAddress: n.BMCIP, MACAddr: n.BMCMAC, User: c.Username, Password: c.Password, Enabled: &enabled,
		RediscoverOnUpdate: true}
}

// profileOf is the profile a node boots: its own, else that of the first
// (by name) NodeGroup it is in that names one.
func profileOf(st *State, n *wire.ComputeNode, member map[string][]string) *wire.BootProfile {
	if n.BootProfile != "" {
		return st.Profiles[n.BootProfile]
	}
	for _, g := range member[n.Xname] {
		if grp := st.Groups[g]; grp != nil && grp.BootProfile != "" {
			return st.Profiles[grp.BootProfile]
		}
	}
	return nil
}

// groupsOf is every group label with its members: NodeGroups' nodes and
// nodes' groups, plus OwnerGroup with every node.
func groupsOf(st *State) map[string][]string {
	out := map[string][]string{OwnerGroup: {}}
	for name, g := range st.Groups {
		out[name] = append(out[name], g.Nodes...)
	}
	for x, n := range st.Nodes {
		out[OwnerGroup] = append(out[OwnerGroup], x)
		for _, g := range n.Groups {
			out[g] = append(out[g], x)
		}
	}
	for k, v := range out {
		slices.Sort(v)
		out[k] = slices.Compact(v)
	}
	return out
}

// memberships inverts groupsOf: node -> its groups (OwnerGroup left out),
// by name.
func memberships(groups map[string][]string) map[string][]string {
	out := map[string][]string{}
	for _, label := range sortedKeys(groups) {
		if label == OwnerGroup {
			continue
		}
		for _, x := range groups[label] {
			out[x] = append(out[x], label)
		}
	}
	return out
}

// bootParams is the BSS entry of a node booting profile p (Hosts unset):
// the profile's kernel, initrd and parameters (image_url becomes
// root=live:URL, dracut's live image, unless the parameters set root=),
// the user-data the profile renders and the owner mark in the meta-data.
func bootParams(p *wire.BootProfile) (bss.BootParams, error) {
	params := p.KernelParams
	if p.ImageURL != "" && !hasParam(params, "root") {
		params = strings.TrimSpace(params + " root=live:" + p.ImageURL)
	}
	ud, err := userData(p)
	if err != nil {
		return bss.BootParams{}, err
	}
	return bss.BootParams{Kernel: p.KernelURL, Initrd: p.InitrdURL, Params: params,
		CloudInit: bss.CloudInit{MetaData: map[string]any{OwnerKey: "nodes"}, UserData: ud}}, nil
}

func hasParam(params, key string) bool {
	for _, f := range strings.Fields(params) {
		if k, _, _ := strings.Cut(f, "="); k == key {
			return true
		}
	}
	return false
}

// userData renders a profile's cloud-config: its user_data (YAML, with or
// without the #cloud-config line, or JSON) with the admin user and SSH key
// added. Without admin_username the key goes to the image's default user.
func userData(p *wire.BootProfile) (map[string]any, error) {
	out := map[string]any{}
	if s := strings.TrimSpace(p.UserData); s != "" {
		if err := yaml.Unmarshal([]byte(s), &out); err != nil {
			return nil, fmt.Errorf("user_data is not a YAML or JSON object: %w", err)
		}
		if out == nil {
			out = map[string]any{}
		}
	}
	switch {
	case p.AdminUsername != "":
		u := map[string]any{"name": p.AdminUsername, "sudo": "ALL=(ALL) NOPASSWD:ALL", "shell": "/bin/bash",
			"groups": "wheel", "lock_passwd": true}
		if p.SSHKey != "" {
			u["ssh_authorized_keys"] = []any{p.SSHKey}
		}
		users, _ := out["users"].([]any)
		if len(users) == 0 {
			users = []any{"default"}
		}
		out["users"] = append(users, u)
	case p.SSHKey != "":
		keys, _ := out["ssh_authorized_keys"].([]any)
		out["ssh_authorized_keys"] = append(keys, p.SSHKey)
	}
	// A JSON round trip gives the form BSS stores and answers.
	b, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	var norm map[string]any
	return norm, json.Unmarshal(b, &norm)
}
