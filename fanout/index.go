package fanout

import (
	"strings"

	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// idSet is a set of subscription ids.
type idSet map[int64]struct{}

func (s idSet) add(id int64) { s[id] = struct{}{} }

// indexed is one subscription as the index holds it.
type indexed struct {
	id       int64
	key      Key
	sub      Subscription
	ref      *urlRef
	all      bool // "all" or no Components: every component
	allNodes bool
	comps    map[string]struct{}
}

func (e *indexed) watches(comp string, isNode bool) bool {
	if e.all || (e.allNodes && isNode) {
		return true
	}
	_, ok := e.comps[comp]
	return ok
}

// index answers "which subscriptions does this SCN match" by looking up the
// SCN's attribute values and components, never by scanning every
// subscription. It is not safe for concurrent use; Service guards it.
type index struct {
	subs    map[int64]*indexed
	byKey   map[Key]int64
	attrs   [4]map[string]idSet // state, role, subrole, software status (lower-cased values)
	enabled idSet
	byComp  map[string]idSet
	urls    map[string]*urlRef
	epoch   uint64 // match calls so far
}

// urlRef is one subscriber URL as the index knows it: how many
// subscriptions use it, and where the current match call put it, so that
// match gathers each URL once without a map keyed by URL (for one SCN to
// 10,000 subscribers, growing and filling that map was most of the match).
type urlRef struct {
	url  string
	n    int    // subscriptions using it
	mark uint64 // the match call that last added it
	slot int    // its place in that call's result
}

// urlMatch is one URL that an SCN goes to, with the components it watches.
type urlMatch struct {
	url   string
	comps []string
}

// urlUses is how many subscriptions use url.
func (ix *index) urlUses(url string) int {
	if r := ix.urls[url]; r != nil {
		return r.n
	}
	return 0
}

const (
	attrState = iota
	attrRole
	attrSubRole
	attrSoftwareStatus
)

func newIndex() *index {
	ix := &index{subs: map[int64]*indexed{}, byKey: map[Key]int64{}, enabled: idSet{}, byComp: map[string]idSet{}, urls: map[string]*urlRef{}}
	for i := range ix.attrs {
		ix.attrs[i] = map[string]idSet{}
	}
	return ix
}

func (ix *index) attrLists(sub *Subscription) [4][]string {
	return [4][]string{sub.States, sub.Roles, sub.SubRoles, sub.SoftwareStatus}
}

// put adds or replaces subscription id.
func (ix *index) put(id int64, k Key, sub Subscription) {
	ix.remove(id)
	e := &indexed{id: id, key: k, sub: sub, all: len(sub.Components) == 0}
	for _, c := range sub.Components {
		switch c {
		case WildcardAll:
			e.all = true
		case WildcardAllNodes:
			e.allNodes = true
		default:
			if e.comps == nil {
				e.comps = map[string]struct{}{}
			}
			e.comps[c] = struct{}{}
			setAdd(ix.byComp, c, id)
		}
	}
	for i, vals := range ix.attrLists(&sub) {
		for _, v := range vals {
			setAdd(ix.attrs[i], strings.ToLower(v), id)
		}
	}
	if sub.Enabled != nil && *sub.Enabled {
		ix.enabled.add(id)
	}
	if e.ref = ix.urls[sub.Url]; e.ref == nil {
		e.ref = &urlRef{url: sub.Url}
		ix.urls[sub.Url] = e.ref
	}
	e.ref.n++
	ix.subs[id] = e
	ix.byKey[k] = id
}

// remove drops subscription id; it reports the removed entry, if any.
func (ix *index) remove(id int64) *indexed {
	e := ix.subs[id]
	if e == nil {
		return nil
	}
	for c := range e.comps {
		setDel(ix.byComp, c, id)
	}
	for i, vals := range ix.attrLists(&e.sub) {
		for _, v := range vals {
			setDel(ix.attrs[i], strings.ToLower(v), id)
		}
	}
	delete(ix.enabled, id)
	delete(ix.subs, id)
	delete(ix.byKey, e.key)
	if e.ref.n--; e.ref.n <= 0 {
		delete(ix.urls, e.sub.Url)
	}
	return e
}

func setAdd(m map[string]idSet, k string, id int64) {
	s := m[k]
	if s == nil {
		s = idSet{}
		m[k] = s
	}
	s.add(id)
}

func setDel(m map[string]idSet, k string, id int64) {
	if s := m[k]; s != nil {
		delete(s, id)
		if len(s) == 0 {
			delete(m, k)
		}
	}
}

// candidates are the subscriptions whose attribute filters the SCN triggers.
func (ix *index) candidates(scn *hsm.SCN) idSet {
	vals := [4]string{scn.State, scn.Role, scn.SubRole, scn.SoftwareStatus}
	var sets []idSet
	for i, v := range vals {
		if v == "" {
			continue
		}
		if s := ix.attrs[i][strings.ToLower(v)]; len(s) > 0 {
			sets = append(sets, s)
		}
	}
	if scn.Enabled != nil && len(ix.enabled) > 0 {
		sets = append(sets, ix.enabled)
	}
	switch len(sets) {
	case 0:
		return nil
	case 1:
		return sets[0]
	}
	u := idSet{}
	for _, s := range sets {
		for id := range s {
			u.add(id)
		}
	}
	return u
}

// match returns, per subscriber URL, the SCN's components that URL's
// subscriptions watch, in SCN order. Several subscriptions sharing a URL get
// one delivery. It writes the urlRefs' scratch fields, so calls must not
// overlap (Service.match holds qmu) even under the read lock.
func (ix *index) match(scn *hsm.SCN) []urlMatch {
	cand := ix.candidates(scn)
	if len(cand) == 0 || len(scn.Components) == 0 {
		return nil
	}
	isNode := make([]bool, len(scn.Components))
	var nodes []string
	for i, c := range scn.Components {
		if isNode[i] = xname.IsNode(c); isNode[i] {
			nodes = append(nodes, c)
		}
	}
	ix.epoch++
	out := make([]urlMatch, 0, len(cand))
	add := func(ref *urlRef, comps []string) {
		if len(comps) == 0 {
			return
		}
		if ref.mark == ix.epoch { // another subscription with this URL matched too
			m := &out[ref.slot]
			m.comps = unionInOrder(scn.Components, m.comps, comps)
			return
		}
		ref.mark, ref.slot = ix.epoch, len(out)
		out = append(out, urlMatch{url: ref.url, comps: comps})
	}
	for id := range cand {
		e := ix.subs[id]
		switch {
		case e.all:
			add(e.ref, scn.Components)
		case e.allNodes && len(e.comps) == 0:
			add(e.ref, nodes)
		case e.allNodes:
			var comps []string
			for i, c := range scn.Components {
				if e.watches(c, isNode[i]) {
					comps = append(comps, c)
				}
			}
			add(e.ref, comps)
		}
	}
	ix.matchExplicit(scn, cand, add)
	return out
}

// matchExplicit handles subscriptions that list components without wildcards,
// walking the SCN's components through the per-component index.
func (ix *index) matchExplicit(scn *hsm.SCN, cand idSet, add func(*urlRef, []string)) {
	var per map[int64][]string
	for _, c := range scn.Components {
		for id := range ix.byComp[c] {
			if _, ok := cand[id]; !ok {
				continue
			}
			if e := ix.subs[id]; e.all || e.allNodes {
				continue
			}
			if per == nil {
				per = map[int64][]string{}
			}
			per[id] = append(per[id], c)
		}
	}
	for id, comps := range per {
		add(ix.subs[id].ref, comps)
	}
}

// unionInOrder merges two subsequences of order into one, in order, without duplicates.
func unionInOrder(order, a, b []string) []string {
	in := make(map[string]struct{}, len(a)+len(b))
	for _, c := range a {
		in[c] = struct{}{}
	}
	for _, c := range b {
		in[c] = struct{}{}
	}
	out := make([]string, 0, len(in))
	for _, c := range order {
		if _, ok := in[c]; ok {
			out = append(out, c)
			delete(in, c)
		}
	}
	return out
}

// hsmFilter is the union of what every subscription watches, plus HSM's known
// roles and subroles: what hmnfd asks HSM for in callback mode.
func (ix *index) hsmFilter() (roles, subRoles, swStatus []string) {
	roles = append([]string(nil), hsmRoles...)
	subRoles = append([]string(nil), hsmSubRoles...)
	swStatus = []string{"AdminDown", "Unknown", "Others"}
	for _, e := range ix.subs {
		roles = append(roles, e.sub.Roles...)
		subRoles = append(subRoles, e.sub.SubRoles...)
		swStatus = append(swStatus, e.sub.SoftwareStatus...)
	}
	return sortUniq(roles), sortUniq(subRoles), sortUniq(swStatus)
}
