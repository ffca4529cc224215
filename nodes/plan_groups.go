package nodes

import (
	"reflect"
	"slices"

	"github.com/hmsuite/hms/ipxe/bss"
	"github.com/hmsuite/hms/nodes/wire"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// rebuildOver is how many member changes make an owned group be deleted
// and made again with its members in one request, instead of one request
// per member.
const rebuildOver = 32

// planGroups makes HSM's groups what the state says: OwnerGroup holds
// every owned node, each NodeGroup (and each group a node names) its
// members. A group the daemon did not make (no OwnerTag) is never deleted
// or described; only the owned nodes' membership of it changes.
func (p *planner) planGroups() {
	want, had := groupsOf(p.st), groupsOf(p.owned)
	for _, label := range sortedKeys(had) {
		if _, ok := want[label]; !ok {
			want[label] = nil
		}
	}
	for _, label := range sortedKeys(want) {
		if p.sc.group(label) {
			p.planGroup(label, want[label], had[label])
		}
	}
}

// groupOwner is the resource a group's own writes are reported on: its
// NodeGroup, else its first member (or former member).
func (p *planner) groupOwner(label string, members, former []string) Key {
	if p.st.Groups[label] != nil || p.owned.Groups[label] != nil {
		return Key{wire.KindNodeGroup, label}
	}
	if len(members) > 0 {
		return nodeKey(members[0])
	}
	if len(former) > 0 {
		return nodeKey(former[0])
	}
	return Key{wire.KindNodeGroup, label}
}

func (p *planner) planGroup(label string, members, former []string) {
	desc := "nodes managed by hms nodes"
	if g := p.st.Groups[label]; g != nil {
		desc = g.Description
	}
	declared := members != nil && (label == OwnerGroup || len(members) > 0 || p.st.Groups[label] != nil)
	owner := p.groupOwner(label, members, former)
	target := "/hsm/v2/groups/" + label
	cur, exists := p.snap.groups[label]
	mine := exists && slices.Contains(cur.Tags, OwnerTag)
	switch {
	case !exists && declared:
		g := hsm.Group{Label: label, Description: desc, Tags: []string{OwnerTag}, Members: hsm.Members{IDs: nonNil(members)}}
		p.b.groupCreate = append(p.b.groupCreate, ownedGroup{owner, g})
		p.note(owner, "hsm", wire.ActionCreate, target, nil, nil)
		return
	case !exists:
		return
	case mine && !declared:
		p.b.groupDelete = append(p.b.groupDelete, ownedName{owner, label})
		p.note(owner, "hsm", wire.ActionDelete, target, nil, nil)
		return
	}
	var adds, removes []string
	have, keep := setOf(cur.Members.IDs), setOf(members)
	for _, x := range members {
		if !have[x] {
			adds = append(adds, x)
		}
	}
	for _, x := range cur.Members.IDs {
		if !keep[x] && (mine || p.owned.Nodes[x] != nil) {
			removes = append(removes, x)
		}
	}
	if mine && len(adds)+len(removes) > rebuildOver {
		g := hsm.Group{Label: label, Description: desc, Tags: cur.Tags, Members: hsm.Members{IDs: nonNil(members)}}
		p.b.groupDelete = append(p.b.groupDelete, ownedName{owner, label})
		p.b.groupCreate = append(p.b.groupCreate, ownedGroup{owner, g})
		p.note(owner, "hsm", wire.ActionUpdate, target, map[string]int{"members": len(cur.Members.IDs)}, map[string]int{"members": len(members)})
		return
	}
	if mine && cur.Description != desc {
		p.b.groupPatch = append(p.b.groupPatch, ownedGroup{owner, hsm.Group{Label: label, Description: desc}})
		p.note(owner, "hsm", wire.ActionUpdate, target, map[string]string{"description": cur.Description}, map[string]string{"description": desc})
	}
	for _, x := range adds {
		p.b.memberAdd = append(p.b.memberAdd, ownedMember{nodeKey(x), label, x})
		p.note(nodeKey(x), "hsm", wire.ActionCreate, target+"/members/"+x, nil, nil)
	}
	for _, x := range removes {
		p.b.memberRemove = append(p.b.memberRemove, ownedMember{nodeKey(x), label, x})
		p.note(nodeKey(x), "hsm", wire.ActionDelete, target+"/members/"+x, nil, nil)
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// planBSS puts each node's boot parameters, one request per profile for
// the nodes whose entry differs, and deletes the entries the daemon marked
// of nodes that no longer boot a profile.
func (p *planner) planBSS() error {
	member := memberships(groupsOf(p.st))
	puts := map[string]*ownedHosts{}
	wants := map[string]bss.BootParams{}
	var order []string
	for _, x := range sortedKeys(p.st.Nodes) {
		prof := profileOf(p.st, p.st.Nodes[x], member)
		if prof == nil || !p.bootInScope(x, prof.Name, member[x]) {
			continue
		}
		want, ok := wants[prof.Name]
		if !ok {
			var err error
			if want, err = bootParams(prof); err != nil {
				return err // checked when the set was read: a stored profile went bad
			}
			wants[prof.Name] = want // rendered once per profile, not per node
		}
		cur, ok := p.snap.bss[x]
		if ok && sameBoot(cur, want) {
			continue
		}
		k := nodeKey(x)
		target := "/boot/v1/bootparameters?name=" + x
		if ok {
			p.note(k, "bss", wire.ActionUpdate, target, bootView(cur), bootView(want))
		} else {
			p.note(k, "bss", wire.ActionCreate, target, nil, nil)
		}
		if puts[prof.Name] == nil {
			puts[prof.Name] = &ownedHosts{bp: want}
			order = append(order, prof.Name)
		}
		w := puts[prof.Name]
		w.owners, w.bp.Hosts = append(w.owners, k), append(w.bp.Hosts, x)
	}
	for _, name := range order {
		p.b.bssPut = append(p.b.bssPut, *puts[name])
	}
	var del ownedHosts
	for _, x := range sortedKeys(p.owned.Nodes) {
		cur, ok := p.snap.bss[x]
		if !ok || cur.CloudInit.MetaData[OwnerKey] != "nodes" || !p.bootInScope(x, "", member[x]) {
			continue
		}
		if n := p.st.Nodes[x]; n != nil && profileOf(p.st, n, member) != nil {
			continue
		}
		del.owners, del.bp.Hosts = append(del.owners, nodeKey(x)), append(del.bp.Hosts, x)
		p.note(nodeKey(x), "bss", wire.ActionDelete, "/boot/v1/bootparameters?name="+x, nil, nil)
	}
	if len(del.owners) > 0 {
		p.b.bssDelete = append(p.b.bssDelete, del)
	}
	return nil
}

// bootInScope reports whether the apply plans node x's boot entry: x is
// its, or the profile x boots, or a group of x (which may give x its
// profile).
func (p *planner) bootInScope(x, profile string, groups []string) bool {
	if p.sc.node(x) || profile != "" && p.sc.profile(profile) {
		return true
	}
	for _, g := range groups {
		if p.sc.group(g) {
			return true
		}
	}
	return false
}

// sameBoot compares what the daemon sets of an entry. Both user-data are
// decoded JSON (want's was made by a JSON round trip), so DeepEqual
// compares them as JSON.
func sameBoot(cur, want bss.BootParams) bool {
	return cur.Kernel == want.Kernel && cur.Initrd == want.Initrd && cur.Params == want.Params &&
		cur.CloudInit.MetaData[OwnerKey] == "nodes" && reflect.DeepEqual(cur.CloudInit.UserData, want.CloudInit.UserData)
}

func bootView(bp bss.BootParams) any {
	return map[string]any{"kernel": bp.Kernel, "initrd": bp.Initrd, "params": bp.Params, "user-data": bp.CloudInit.UserData}
}

func setOf(ids []string) map[string]bool {
	out := make(map[string]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out
}
