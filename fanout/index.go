package fanout

import (
	"strings"

	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// indexed is one subscription as the index holds it.
type indexed struct {
	id       int64
	key      Key
	sub      Subscription
	ref      *urlRef
	all      bool // "all" or no Components: every component
	allNodes bool
	comps    map[string]struct{}
	cand     uint64 // the match call whose candidates it was last among
}

func (e *indexed) watches(comp string, isNode bool) bool {
	if e.all || (e.allNodes && isNode) {
		return true
	}
	_, ok := e.comps[comp]
	return ok
}

// entrySet is a set of subscriptions kept as a slice of entries, so that
// matching walks it without hashing: for one SCN to 10,000 subscribers,
// iterating a map of ids and looking each one up was most of the index's
// time (issue 20). Removal swaps the last entry into the gap.
type entrySet struct {
	list []*indexed
	at   map[*indexed]int // position in list
}

func (s *entrySet) add(e *indexed) {
	if _, ok := s.at[e]; ok {
		return
	}
	if s.at == nil {
		s.at = map[*indexed]int{}
	}
	s.at[e] = len(s.list)
	s.list = append(s.list, e)
}

func (s *entrySet) del(e *indexed) {
	i, ok := s.at[e]
	if !ok {
		return
	}
	last := len(s.list) - 1
	s.list[i] = s.list[last]
	s.at[s.list[i]] = i
	s.list[last] = nil
	s.list = s.list[:last]
	delete(s.at, e)
}

func (s *entrySet) len() int { return len(s.list) }

// index answers "which subscriptions does this SCN match" by looking up the
// SCN's attribute values and components, never by scanning every
// subscription. It is not safe for concurrent use; Service guards it.
type index struct {
	subs    map[int64]*indexed
	byKey   map[Key]int64
	attrs   [4]map[string]*entrySet // state, role, subrole, software status (lower-cased values)
	enabled entrySet
	byComp  map[string]*entrySet
	urls    map[string]*urlRef
	epoch   uint64 // match calls so far
}

// urlRef is one subscriber URL as the index knows it: how many
// subscriptions use it, its sender (set by Service when the URL is first
// indexed, so an Enqueue finds sender and target id without a lookup by
// URL), and where the current match call put it, so that match gathers each
// URL once without a map keyed by URL (for one SCN to 10,000 subscribers,
// growing and filling that map was most of the match).
type urlRef struct {
	url  string
	n    int     // subscriptions using it
	snd  *sender // written only under Service.mu's write lock
	mark uint64  // the match call that last added it
	slot int     // its place in that call's result
	// Scratch of Service.match (under qmu): the Enqueue that last queued
	// to it, and its place in that Enqueue's queues.
	enq   uint64
	qslot int
}

// urlMatch is one URL that an SCN goes to, with the components it watches.
type urlMatch struct {
	ref   *urlRef
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
	ix := &index{subs: map[int64]*indexed{}, byKey: map[Key]int64{}, byComp: map[string]*entrySet{}, urls: map[string]*urlRef{}}
	for i := range ix.attrs {
		ix.attrs[i] = map[string]*entrySet{}
	}
	return ix
}

func (ix *index) attrLists(sub *Subscription) [4][]string {
	return [4][]string{sub.States, sub.Roles, sub.SubRoles, sub.SoftwareStatus}
}

// put adds or replaces subscription id and returns its URL's entry.
func (ix *index) put(id int64, k Key, sub Subscription) *urlRef {
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
			setAdd(ix.byComp, c, e)
		}
	}
	for i, vals := range ix.attrLists(&sub) {
		for _, v := range vals {
			setAdd(ix.attrs[i], strings.ToLower(v), e)
		}
	}
	if sub.Enabled != nil && *sub.Enabled {
		ix.enabled.add(e)
	}
	if e.ref = ix.urls[sub.Url]; e.ref == nil {
		e.ref = &urlRef{url: sub.Url}
		ix.urls[sub.Url] = e.ref
	}
	e.ref.n++
	ix.subs[id] = e
	ix.byKey[k] = id
	return e.ref
}

// remove drops subscription id; it reports the removed entry, if any.
func (ix *index) remove(id int64) *indexed {
	e := ix.subs[id]
	if e == nil {
		return nil
	}
	for c := range e.comps {
		setDel(ix.byComp, c, e)
	}
	for i, vals := range ix.attrLists(&e.sub) {
		for _, v := range vals {
			setDel(ix.attrs[i], strings.ToLower(v), e)
		}
	}
	ix.enabled.del(e)
	delete(ix.subs, id)
	delete(ix.byKey, e.key)
	if e.ref.n--; e.ref.n <= 0 {
		delete(ix.urls, e.sub.Url)
	}
	return e
}

func setAdd(m map[string]*entrySet, k string, e *indexed) {
	s := m[k]
	if s == nil {
		s = &entrySet{}
		m[k] = s
	}
	s.add(e)
}

func setDel(m map[string]*entrySet, k string, e *indexed) {
	if s := m[k]; s != nil {
		s.del(e)
		if s.len() == 0 {
			delete(m, k)
		}
	}
}

// candidates are the subscriptions whose attribute filters the SCN
// triggers; each is marked with the current match call (indexed.cand). The
// slice may be the index's own: the caller must not change it.
func (ix *index) candidates(scn *hsm.SCN) []*indexed {
	vals := [4]string{scn.State, scn.Role, scn.SubRole, scn.SoftwareStatus}
	var sets [5]*entrySet
	n := 0
	for i, v := range vals {
		if v == "" {
			continue
		}
		if s := ix.attrs[i][strings.ToLower(v)]; s != nil && s.len() > 0 {
			sets[n], n = s, n+1
		}
	}
	if scn.Enabled != nil && ix.enabled.len() > 0 {
		sets[n], n = &ix.enabled, n+1
	}
	switch n {
	case 0:
		return nil
	case 1:
		for _, e := range sets[0].list {
			e.cand = ix.epoch
		}
		return sets[0].list
	}
	var u []*indexed
	for _, s := range sets[:n] {
		for _, e := range s.list {
			if e.cand != ix.epoch {
				e.cand = ix.epoch
				u = append(u, e)
			}
		}
	}
	return u
}

// match returns, per subscriber URL, the SCN's components that URL's
// subscriptions watch, in SCN order. Several subscriptions sharing a URL get
// one delivery. It writes the entries' and urlRefs' scratch fields, so calls
// must not overlap (Service.match holds qmu) even under the read lock.
func (ix *index) match(scn *hsm.SCN) []urlMatch {
	if len(scn.Components) == 0 {
		return nil
	}
	ix.epoch++
	cand := ix.candidates(scn)
	if len(cand) == 0 {
		return nil
	}
	isNode := make([]bool, len(scn.Components))
	var nodes []string
	for i, c := range scn.Components {
		if isNode[i] = xname.IsNode(c); isNode[i] {
			nodes = append(nodes, c)
		}
	}
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
		out = append(out, urlMatch{ref: ref, comps: comps})
	}
	for _, e := range cand {
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
	ix.matchExplicit(scn, add)
	return out
}

// matchExplicit handles subscriptions that list components without wildcards,
// walking the SCN's components through the per-component index; the
// candidates are marked (see candidates).
func (ix *index) matchExplicit(scn *hsm.SCN, add func(*urlRef, []string)) {
	var per map[*indexed][]string
	var order []*indexed
	for _, c := range scn.Components {
		s := ix.byComp[c]
		if s == nil {
			continue
		}
		for _, e := range s.list {
			if e.cand != ix.epoch || e.all || e.allNodes {
				continue
			}
			if per == nil {
				per = map[*indexed][]string{}
			}
			if _, seen := per[e]; !seen {
				order = append(order, e)
			}
			per[e] = append(per[e], c)
		}
	}
	for _, e := range order {
		add(e.ref, per[e])
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
