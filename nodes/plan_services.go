package nodes

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/hmsuite/hms/layout/sls"
	"github.com/hmsuite/hms/nodes/wire"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// Secret is a node's BMC credentials, and whether the apply brought new
// ones (the endpoint is then updated: HSM never shows the password back).
type Secret struct {
	wire.Credentials
	Changed bool
}

// planner compares the services with the desired state.
type planner struct {
	st, owned *State
	snap      *snapshot
	secrets   map[string]Secret
	sc        *Scope
	nids      map[string]int
	marked    map[string]bool // OwnerGroup's members, read once
	w         *Writes
	b         *batch
}

// Plan compares the services with what st declares; owned is everything
// the daemon owns before and after the apply. Writes are planned for the
// resources of sc only.
func (s *Services) Plan(ctx context.Context, st, owned *State, secrets map[string]Secret, sc *Scope) (*Writes, error) {
	withEndpoints := false
	for _, n := range owned.Nodes {
		withEndpoints = withEndpoints || n.BMCCredentialsFile != ""
	}
	snap, err := s.read(ctx, withEndpoints)
	if err != nil {
		return nil, fmt.Errorf("read the services: %w", err)
	}
	p := &planner{st: st, owned: owned, snap: snap, secrets: secrets, sc: sc,
		w: &Writes{Changes: map[Key][]wire.ServiceChange{}}, b: &batch{slsPut: make([][]ownedHW, 5)}}
	p.w.batch = p.b
	p.assignNIDs()
	p.planSLS()
	p.planComponents()
	p.planEthernet()
	p.planEndpoints()
	p.planGroups()
	if err := p.planBSS(); err != nil {
		return nil, err
	}
	return p.w, nil
}

func nodeKey(x string) Key { return Key{wire.KindComputeNode, x} }

// note records a service change on its resource.
func (p *planner) note(k Key, service, action, target string, before, after any) {
	sc := wire.ServiceChange{Service: service, Action: action, Target: target}
	if action == wire.ActionUpdate {
		sc.Before, sc.After = jsonOf(before), jsonOf(after)
	}
	p.w.Changes[k] = append(p.w.Changes[k], sc)
}

func jsonOf(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, _ := json.Marshal(v)
	return b
}

// ownsNode reports whether the services carry the daemon's mark on node x
// (membership of OwnerGroup): only such nodes are deleted.
func (p *planner) ownsNode(x string) bool {
	if p.marked == nil {
		p.marked = setOf(p.snap.groups[OwnerGroup].Members.IDs)
	}
	return p.marked[x]
}

// removed lists the nodes the daemon owned and the apply drops, by name.
func (p *planner) removed() []string {
	var out []string
	for _, x := range sortedKeys(p.owned.Nodes) {
		if p.st.Nodes[x] == nil && p.sc.node(x) {
			out = append(out, x)
		}
	}
	return out
}

// declared lists the nodes of the state in the apply's scope, by name.
func (p *planner) declared() []string {
	var out []string
	for _, x := range sortedKeys(p.st.Nodes) {
		if p.sc.node(x) {
			out = append(out, x)
		}
	}
	return out
}

// assignNIDs gives each node its NID: declared, else SLS's, else HSM's,
// else the lowest free one (in xname order).
func (p *planner) assignNIDs() {
	p.nids = map[string]int{}
	used := map[int]bool{}
	for _, h := range p.snap.sls {
		if nid := slsNID(h); nid > 0 && p.st.Nodes[h.Xname] == nil {
			used[nid] = true
		}
	}
	for _, c := range p.snap.comps {
		if c.NID != nil && p.st.Nodes[c.ID] == nil {
			used[*c.NID] = true
		}
	}
	var unassigned []string
	for _, x := range sortedKeys(p.st.Nodes) {
		nid := p.st.Nodes[x].NID
		if nid == 0 {
			nid = slsNID(p.snap.sls[x])
		}
		if c, ok := p.snap.comps[x]; nid == 0 && ok && c.NID != nil {
			nid = *c.NID
		}
		if nid == 0 || used[nid] {
			unassigned = append(unassigned, x)
			continue
		}
		p.nids[x], used[nid] = nid, true
	}
	next := 1
	for _, x := range unassigned {
		if n := p.st.Nodes[x].NID; n > 0 {
			p.nids[x] = n // declared and taken: HSM will refuse it, on this node
			continue
		}
		for used[next] {
			next++
		}
		p.nids[x], used[next] = next, true
	}
}

func slsNID(h sls.Hardware) int {
	var props sls.NodeProps
	if len(h.ExtraProperties) == 0 || json.Unmarshal(h.ExtraProperties, &props) != nil {
		return 0
	}
	return props.NID
}

// planSLS puts each node, its BMC and the missing ancestors, and deletes
// the dropped nodes the daemon marked (with their BMC when no other child
// is left: SLS deletes a BMC's children with it). Cabinets, chassis and
// slots are left: other hardware may hang from them.
func (p *planner) planSLS() {
	queued := map[string]bool{}
	for _, x := range p.declared() {
		n, k := p.st.Nodes[x], nodeKey(x)
		for depth, anc := range chain(x) {
			if _, ok := p.snap.sls[anc]; ok || queued[anc] || depth > 3 {
				continue
			}
			queued[anc] = true
			p.b.slsPut[depth] = append(p.b.slsPut[depth], ownedHW{k, sls.Hardware{Xname: anc, Class: sls.River}})
			p.note(k, "sls", wire.ActionCreate, "/v1/hardware/"+anc, nil, nil)
		}
		want := slsNode(n, p.nids[x])
		cur, ok := p.snap.sls[x]
		switch {
		case !ok:
			p.b.slsPut[4] = append(p.b.slsPut[4], ownedHW{k, want})
			p.note(k, "sls", wire.ActionCreate, "/v1/hardware/"+x, nil, nil)
		case cur.Class != want.Class || !jsonEqual(cur.ExtraProperties, want.ExtraProperties):
			p.b.slsPut[4] = append(p.b.slsPut[4], ownedHW{k, want})
			p.note(k, "sls", wire.ActionUpdate, "/v1/hardware/"+x, slsView(cur), slsView(want))
		}
	}
	gone := map[string]bool{}
	for _, x := range p.removed() {
		if _, ok := p.snap.sls[x]; ok && p.ownsNode(x) {
			gone[x] = true
		}
	}
	for _, x := range sortedKeys(gone) {
		target := x
		if bmc := bmcOf(x); p.onlyGoneChildren(bmc, gone) {
			target = bmc
		}
		if target == bmcOf(x) && x != firstGoneChild(p.snap.sls[target], gone) {
			continue // the BMC's delete is queued on its first child
		}
		p.b.slsDelete = append(p.b.slsDelete, ownedName{nodeKey(x), target})
		p.note(nodeKey(x), "sls", wire.ActionDelete, "/v1/hardware/"+target, nil, nil)
	}
}

func slsView(h sls.Hardware) any {
	return map[string]any{"Xname": h.Xname, "Class": h.Class, "ExtraProperties": h.ExtraProperties}
}

// onlyGoneChildren reports whether every child of bmc in SLS is deleted,
// and no declared node remains under it.
func (p *planner) onlyGoneChildren(bmc string, gone map[string]bool) bool {
	h, ok := p.snap.sls[bmc]
	if !ok {
		return false
	}
	for _, c := range h.Children {
		if !gone[c] {
			return false
		}
	}
	for x := range p.st.Nodes {
		if bmcOf(x) == bmc {
			return false
		}
	}
	return true
}

func firstGoneChild(h sls.Hardware, gone map[string]bool) string {
	kids := slices.Clone(h.Children)
	slices.Sort(kids)
	for _, c := range kids {
		if gone[c] {
			return c
		}
	}
	return ""
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// planComponents creates the missing nodes, fixes role, NID and arch of
// the others, and deletes the dropped nodes the daemon marked.
func (p *planner) planComponents() {
	for _, x := range p.declared() {
		n, k := p.st.Nodes[x], nodeKey(x)
		want := hsmComponent(n, p.nids[x])
		cur, ok := p.snap.comps[x]
		target := "/hsm/v2/State/Components/" + x
		switch {
		case !ok:
			p.b.compCreate = append(p.b.compCreate, ownedComp{k, want})
			p.note(k, "hsm", wire.ActionCreate, target, nil, nil)
			continue
		case cur.NID == nil || *cur.NID != *want.NID:
			// HSM changes no NID in place: the component is made again.
			p.b.compDelete = append(p.b.compDelete, ownedName{k, x})
			p.b.compCreate = append(p.b.compCreate, ownedComp{k, want})
			p.note(k, "hsm", wire.ActionUpdate, target, map[string]any{"NID": cur.NID}, map[string]any{"NID": want.NID})
			continue
		}
		if cur.Role != want.Role || cur.SubRole != want.SubRole {
			p.b.compRole = append(p.b.compRole, ownedComp{k, want})
			p.note(k, "hsm", wire.ActionUpdate, target+"/Role", map[string]string{"Role": cur.Role, "SubRole": cur.SubRole},
				map[string]string{"Role": want.Role, "SubRole": want.SubRole})
		}
		if want.Arch != "" && cur.Arch != want.Arch {
			c := want
			c.State, c.Flag = cur.State, cur.Flag
			p.b.compForce = append(p.b.compForce, ownedComp{k, c})
			p.note(k, "hsm", wire.ActionUpdate, target, map[string]string{"Arch": cur.Arch}, map[string]string{"Arch": want.Arch})
		}
	}
	for _, x := range p.removed() {
		if _, ok := p.snap.comps[x]; ok && p.ownsNode(x) {
			p.b.compDelete = append(p.b.compDelete, ownedName{nodeKey(x), x})
			p.note(nodeKey(x), "hsm", wire.ActionDelete, "/hsm/v2/State/Components/"+x, nil, nil)
		}
	}
}

// planEthernet creates or fixes each node's interfaces and deletes those
// of its old MACs (and of dropped nodes) still pointing at it.
func (p *planner) planEthernet() {
	wanted, planned := map[string]bool{}, map[string]bool{}
	for _, n := range p.st.Nodes {
		for _, e := range ethernet(n) {
			wanted[e.ID] = true // kept, even when another apply's
		}
	}
	for _, x := range p.declared() {
		k := nodeKey(x)
		for _, want := range ethernet(p.st.Nodes[x]) {
			if planned[want.ID] {
				continue // a BMC's interface, met on a node before
			}
			planned[want.ID] = true
			target := "/hsm/v2/Inventory/EthernetInterfaces/" + want.ID
			cur, ok := p.snap.eths[want.ID]
			switch {
			case !ok:
				p.b.ethCreate = append(p.b.ethCreate, ownedEth{k, want})
				p.note(k, "hsm", wire.ActionCreate, target, nil, nil)
			case cur.ComponentID != want.ComponentID || !sameIPs(cur.IPAddresses, want.IPAddresses):
				p.b.ethPatch = append(p.b.ethPatch, ownedEth{k, want})
				p.note(k, "hsm", wire.ActionUpdate, target, ethView(cur), ethView(want))
			}
		}
	}
	for _, x := range sortedKeys(p.owned.Nodes) {
		if !p.sc.node(x) {
			continue
		}
		for _, old := range ethernet(p.owned.Nodes[x]) {
			cur, ok := p.snap.eths[old.ID]
			if ok && !wanted[old.ID] && cur.ComponentID == old.ComponentID {
				p.b.ethDelete = append(p.b.ethDelete, ownedName{nodeKey(x), old.ID})
				p.note(nodeKey(x), "hsm", wire.ActionDelete, "/hsm/v2/Inventory/EthernetInterfaces/"+old.ID, nil, nil)
			}
		}
	}
}

func ethView(e hsm.EthernetInterface) any {
	return map[string]any{"ComponentID": e.ComponentID, "IPAddresses": e.IPAddresses}
}

func sameIPs(a, b []hsm.IPAddressMapping) bool {
	ips := func(m []hsm.IPAddressMapping) []string {
		var out []string
		for _, x := range m {
			out = append(out, x.IPAddress)
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(ips(a), ips(b))
}

// planEndpoints creates the Redfish endpoint of each node with BMC
// credentials, updates it when its address or credentials changed, and
// deletes the endpoints of nodes that no longer have credentials.
func (p *planner) planEndpoints() {
	wanted, planned := map[string]bool{}, map[string]bool{}
	for x, n := range p.st.Nodes {
		if _, ok := p.secrets[n.BMCCredentialsFile]; ok && n.BMCCredentialsFile != "" {
			wanted[bmcOf(x)] = true // kept, even when another apply's
		}
	}
	for _, x := range p.declared() {
		n, k := p.st.Nodes[x], nodeKey(x)
		sec, ok := p.secrets[n.BMCCredentialsFile]
		if n.BMCCredentialsFile == "" || !ok {
			continue
		}
		want := endpoint(n, sec.Credentials)
		if planned[want.ID] {
			continue // a BMC met on a node before
		}
		planned[want.ID] = true
		target := "/hsm/v2/Inventory/RedfishEndpoints/" + want.ID
		cur, ok := p.snap.rfes[want.ID]
		switch {
		case !ok:
			p.b.rfeCreate = append(p.b.rfeCreate, ownedRFE{k, want})
			p.note(k, "hsm", wire.ActionCreate, target, nil, nil)
		case sec.Changed || cur.FQDN != want.FQDN || cur.IPAddress != want.IPAddress || cur.MACAddr != want.MACAddr || cur.User != want.User:
			p.b.rfePatch = append(p.b.rfePatch, ownedRFE{k, want})
			// The password is never shown: the views hold the address and user only.
			p.note(k, "hsm", wire.ActionUpdate, target, rfeView(cur), rfeView(want))
		}
	}
	for _, x := range sortedKeys(p.owned.Nodes) {
		n := p.owned.Nodes[x]
		if n.BMCCredentialsFile == "" || !p.sc.node(x) {
			continue
		}
		id := bmcOf(x)
		if _, ok := p.snap.rfes[id]; ok && !wanted[id] && p.ownsNode(x) {
			wanted[id] = true // one delete per BMC
			p.b.rfeDelete = append(p.b.rfeDelete, ownedName{nodeKey(x), id})
			p.note(nodeKey(x), "hsm", wire.ActionDelete, "/hsm/v2/Inventory/RedfishEndpoints/"+id, nil, nil)
		}
	}
}

func rfeView(e hsm.RedfishEndpoint) any {
	return map[string]string{"FQDN": e.FQDN, "IPAddress": e.IPAddress, "MACAddr": e.MACAddr, "User": e.User}
}
