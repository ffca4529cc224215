package nodes

import (
	"context"
	"maps"
	"sync"

	"github.com/hmsuite/hms/nodes/wire"
)

// An apply locks the keys of what it may write, so that applies of
// disjoint resources (two racks, one node's PUT beside a large apply)
// run together while two that share a resource, or a service object
// (a BMC's interface, a group's members, a profile's boot entries), take
// turns. Reads take no lock. Keys are the resources' own (kind/name)
// plus these:
const (
	// keyOwner is taken by an apply that creates or deletes nodes or
	// changes a NID: it changes OwnerGroup's members and the set of NIDs
	// in use, which every such apply plans against.
	keyOwner = "owner"
	// keyBMC + a BMC's xname is taken for each node under that BMC: its
	// nodes share its interface, endpoint and SLS object.
	keyBMC = "bmc/"
	// keySecret + a reference is taken for each credentials file used or
	// sent: its sealed content is shared by every node naming it.
	keySecret = "secret/"
)

func resKey(kind, name string) string { return kind + "/" + name }

// keyLocks holds the keys of the applies in progress.
type keyLocks struct {
	mu      sync.Mutex
	held    map[string]bool
	all     bool          // a prune holds everything
	pruning int           // prunes waiting: no new apply starts meanwhile
	changed chan struct{} // closed, and replaced, whenever keys are released
}

func newKeyLocks() *keyLocks {
	return &keyLocks{held: map[string]bool{}, changed: make(chan struct{})}
}

// lock waits until none of keys is held (nothing at all, for all) and
// takes them; release gives them back. While a prune waits, no apply
// starts: else a steady flow of small applies, each starting before the
// last ended, would keep it waiting for ever.
func (l *keyLocks) lock(ctx context.Context, keys map[string]bool, all bool) (release func(), err error) {
	waiting := false
	for {
		l.mu.Lock()
		if l.free(keys, all) {
			if waiting {
				l.pruning--
			}
			l.all = all
			for k := range keys {
				l.held[k] = true
			}
			l.mu.Unlock()
			return func() { l.unlock(keys, all) }, nil
		}
		if all && !waiting {
			l.pruning++
			waiting = true
		}
		wait := l.changed
		l.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			if waiting {
				l.mu.Lock()
				l.pruning--
				l.wake() // the applies held back for it
				l.mu.Unlock()
			}
			return nil, ctx.Err()
		}
	}
}

func (l *keyLocks) free(keys map[string]bool, all bool) bool {
	if l.all || all && len(l.held) > 0 || !all && l.pruning > 0 {
		return false
	}
	for k := range keys {
		if l.held[k] {
			return false
		}
	}
	return true
}

// wake tells the waiters that the locks changed; l.mu is held.
func (l *keyLocks) wake() {
	close(l.changed)
	l.changed = make(chan struct{})
}

func (l *keyLocks) unlock(keys map[string]bool, all bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if all {
		l.all = false
	}
	for k := range keys {
		delete(l.held, k)
	}
	l.wake()
}

// Scope is what an apply may plan writes for: the resources it locked, and
// whatever those decide (a locked profile's boot entries, a locked group's
// members). All is a prune's: everything.
type Scope struct {
	All   bool
	keys  map[string]bool
	owner bool
}

// everything is the scope of a whole-set apply.
func everything() *Scope { return &Scope{All: true} }

func (sc *Scope) node(x string) bool {
	return sc.All || sc.keys[resKey(wire.KindComputeNode, x)]
}

func (sc *Scope) group(label string) bool {
	if label == OwnerGroup {
		return sc.All || sc.owner
	}
	return sc.All || sc.keys[resKey(wire.KindNodeGroup, label)]
}

func (sc *Scope) profile(name string) bool {
	return sc.All || sc.keys[resKey(wire.KindBootProfile, name)]
}

// lockKeys are the keys an apply of in to stored takes.
func lockKeys(stored *State, in *set, req wire.ApplyRequest) map[string]bool {
	k := map[string]bool{}
	listing := map[string][]*wire.NodeGroup{} // node -> the groups that list it
	for _, groups := range []map[string]*wire.NodeGroup{stored.Groups, in.groups} {
		for _, g := range groups {
			for _, x := range g.Nodes {
				listing[x] = append(listing[x], g)
			}
		}
	}
	for ref := range req.Secrets {
		k[keySecret+ref] = true
	}
	for x, n := range in.nodes {
		k[resKey(wire.KindComputeNode, x)] = true
		old := stored.Nodes[x]
		if old == nil != req.Delete || old != nil && !req.Delete && n.NID != old.NID {
			k[keyOwner] = true
		}
		if !req.Delete {
			nodeKeys(k, n, stored, in, listing[x])
		}
		if old != nil {
			nodeKeys(k, old, stored, in, listing[x])
		}
	}
	for name := range in.profiles {
		k[resKey(wire.KindBootProfile, name)] = true
	}
	for name, g := range in.groups {
		k[resKey(wire.KindNodeGroup, name)] = true
		for _, v := range []*wire.NodeGroup{g, stored.Groups[name]} {
			if v != nil && v.BootProfile != "" {
				k[resKey(wire.KindBootProfile, v.BootProfile)] = true
			}
		}
	}
	return k
}

// nodeKeys adds the keys of what node n's writes share: its BMC, its
// credentials, its groups (named by it, or naming it, stored or declared)
// and the profiles it may boot.
func nodeKeys(k map[string]bool, n *wire.ComputeNode, stored *State, in *set, listing []*wire.NodeGroup) {
	k[keyBMC+bmcOf(n.Xname)] = true
	if n.BMCCredentialsFile != "" {
		k[keySecret+n.BMCCredentialsFile] = true
	}
	if n.BootProfile != "" {
		k[resKey(wire.KindBootProfile, n.BootProfile)] = true
	}
	group := func(g *wire.NodeGroup) {
		if g == nil {
			return
		}
		k[resKey(wire.KindNodeGroup, g.Name)] = true
		if g.BootProfile != "" {
			k[resKey(wire.KindBootProfile, g.BootProfile)] = true
		}
	}
	for _, name := range n.Groups {
		k[resKey(wire.KindNodeGroup, name)] = true
		group(stored.Groups[name])
		group(in.groups[name])
	}
	for _, g := range listing {
		group(g)
	}
}

// covers reports whether held has every key of want.
func covers(held, want map[string]bool) bool {
	for k := range want {
		if !held[k] {
			return false
		}
	}
	return true
}

// scopeOf is the scope of an apply holding keys.
func scopeOf(keys map[string]bool) *Scope {
	return &Scope{keys: maps.Clone(keys), owner: keys[keyOwner]}
}
