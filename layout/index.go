package layout

import (
	"slices"
	"strings"
	"time"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
)

// entry is one stored hardware object. Entries are immutable once built: a write
// replaces the entry, so a reader holding one never sees it change.
type entry struct {
	xname       string
	parent      string
	htype       xname.Type
	stype       string // SLS comptype_* name
	class       Class
	extra       []byte // compact JSON object, or nil
	props       []prop
	updated     int64 // Unix microseconds
	updatedTime string

	// kids mirrors index.children[xname], so rendering needs no map lookup.
	// Unlike the other fields it changes as children come and go, under the
	// store's write lock; readers copy it under the read lock.
	kids []*entry
}

// storable reports whether SLS keeps objects of type t.
func storable(t xname.Type) bool {
	return t != xname.System && t.SLSType() != ""
}

// newEntry validates in and builds its entry, stamped at now. The derived
// fields of in are ignored. Errors name the offending field.
func newEntry(in Hardware, now time.Time, nowText string, names interner) (*entry, error) {
	x, err := xname.Parse(in.Xname)
	if err != nil {
		return nil, mark(problem.Invalidf("Xname: %v", err), failXname, in.Xname)
	}
	t := x.Type()
	if !storable(t) {
		return nil, problem.Invalidf("Xname %s: SLS does not store objects of type %s", x, t)
	}
	if in.Type != "" && in.Type != t.SLSType() {
		return nil, problem.Invalidf("Type %q does not match xname %s, which is a %s", in.Type, x, t.SLSType())
	}
	if in.Class == "" {
		return nil, mark(problem.Invalidf("Class: missing; must be River, Mountain or Hill"), failNoClass, "")
	}
	class, err := ParseClass(string(in.Class))
	if err != nil {
		return nil, err
	}
	extra, props, err := parseExtra(t, in.ExtraProperties, names)
	if err != nil {
		return nil, err
	}
	parent, _ := x.Parent()
	return &entry{
		xname: x.String(), parent: parent.String(), htype: t, stype: t.SLSType(), class: class,
		extra: extra, props: props, updated: now.UnixMicro(), updatedTime: nowText,
	}, nil
}

// timeText is the LastUpdatedTime spelling of t: Go's time.Time.String()
// of the microsecond timestamp the shipped SLS reads back from Postgres
// ("2026-11-24 05:31:10.123456 +0000 UTC", trailing zeros of the fraction
// dropped), without String's monotonic clock suffix.
func timeText(t time.Time) string {
	return t.UTC().Truncate(time.Microsecond).Format("2006-01-02 15:04:05.999999999 -0700 MST")
}

// index holds every stored hardware entry and the posting lists searches use.
// Every list is sorted by xname, so results come out in a stable order without
// sorting at query time.
type index struct {
	byXname  map[string]*entry
	all      []*entry
	children map[string][]*entry
	byType   map[string][]*entry
	byProp   map[string]map[string][]*entry
}

// newIndex builds an index from entries sorted by xname.
func newIndex(sorted []*entry) *index {
	ix := &index{
		byXname:  make(map[string]*entry, len(sorted)),
		all:      sorted,
		children: make(map[string][]*entry, len(sorted)/2),
		byType:   make(map[string][]*entry),
		byProp:   make(map[string]map[string][]*entry),
	}
	for _, e := range sorted {
		ix.byXname[e.xname] = e
		ix.children[e.parent] = append(ix.children[e.parent], e)
		ix.byType[e.stype] = append(ix.byType[e.stype], e)
		for _, p := range e.props {
			ix.propList(p.field)[p.value] = append(ix.byProp[p.field][p.value], e)
		}
	}
	for parent, kids := range ix.children {
		if p := ix.byXname[parent]; p != nil {
			p.kids = kids
		}
	}
	return ix
}

// setChildren stores the children list of parent in the map and in the
// parent's entry, if it is stored.
func (ix *index) setChildren(parent string, kids []*entry) {
	if len(kids) == 0 {
		delete(ix.children, parent)
		kids = nil
	} else {
		ix.children[parent] = kids
	}
	if p := ix.byXname[parent]; p != nil {
		p.kids = kids
	}
}

func (ix *index) propList(field string) map[string][]*entry {
	m := ix.byProp[field]
	if m == nil {
		m = make(map[string][]*entry)
		ix.byProp[field] = m
	}
	return m
}

func cmpEntry(a, b *entry) int { return strings.Compare(a.xname, b.xname) }

func insertSorted(list []*entry, e *entry) []*entry {
	i, _ := slices.BinarySearchFunc(list, e, cmpEntry)
	return slices.Insert(list, i, e)
}

// cowInsert and cowRemove never modify the array they are given, so a reader
// that copied a children list under the read lock can render it after
// releasing the lock.
func cowInsert(list []*entry, e *entry) []*entry {
	i, _ := slices.BinarySearchFunc(list, e, cmpEntry)
	out := make([]*entry, 0, len(list)+1)
	return append(append(append(out, list[:i]...), e), list[i:]...)
}

func cowRemove(list []*entry, e *entry) []*entry {
	i, found := slices.BinarySearchFunc(list, e, cmpEntry)
	if !found || list[i] != e {
		return list
	}
	out := make([]*entry, 0, len(list)-1)
	return append(append(out, list[:i]...), list[i+1:]...)
}

func removeSorted(list []*entry, e *entry) []*entry {
	i, found := slices.BinarySearchFunc(list, e, cmpEntry)
	if !found || list[i] != e {
		return list
	}
	return slices.Delete(list, i, i+1)
}

// put adds e, replacing any entry with the same xname.
func (ix *index) put(e *entry) {
	if old := ix.byXname[e.xname]; old != nil {
		ix.remove(old)
	}
	ix.byXname[e.xname] = e
	e.kids = ix.children[e.xname]
	ix.all = insertSorted(ix.all, e)
	ix.setChildren(e.parent, cowInsert(ix.children[e.parent], e))
	ix.byType[e.stype] = insertSorted(ix.byType[e.stype], e)
	for _, p := range e.props {
		m := ix.propList(p.field)
		m[p.value] = insertSorted(m[p.value], e)
	}
}

// remove drops e from every list; empty lists are deleted so the maps do not
// grow without bound as objects come and go.
func (ix *index) remove(e *entry) {
	delete(ix.byXname, e.xname)
	ix.all = removeSorted(ix.all, e)
	ix.setChildren(e.parent, cowRemove(ix.children[e.parent], e))
	dropFrom(ix.byType, e.stype, e)
	for _, p := range e.props {
		if m := ix.byProp[p.field]; m != nil {
			dropFrom(m, p.value, e)
			if len(m) == 0 {
				delete(ix.byProp, p.field)
			}
		}
	}
}

func dropFrom(m map[string][]*entry, key string, e *entry) {
	l := removeSorted(m[key], e)
	if len(l) == 0 {
		delete(m, key)
		return
	}
	m[key] = l
}

// subtree returns x and every stored entry below it in the xname tree, whether
// or not the objects in between are stored. A descendant's name is x followed
// by a letter, so "x1" does not claim "x10".
func (ix *index) subtree(x string) []*entry {
	lo, _ := slices.BinarySearchFunc(ix.all, x, func(e *entry, s string) int { return strings.Compare(e.xname, s) })
	var out []*entry
	for _, e := range ix.all[lo:] {
		if !strings.HasPrefix(e.xname, x) {
			break
		}
		if len(e.xname) == len(x) || isLetter(e.xname[len(x)]) {
			out = append(out, e)
		}
	}
	return out
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' }

// search returns the entries matching every criterion of q, in xname order. It
// starts from the shortest posting list the query names and filters that.
func (ix *index) search(q HardwareQuery) []*entry {
	cand, ok := ix.all, false
	pick := func(l []*entry) {
		if !ok || len(l) < len(cand) {
			cand, ok = l, true
		}
	}
	if q.Xname != "" {
		var l []*entry
		if e := ix.byXname[q.Xname]; e != nil {
			l = []*entry{e}
		}
		pick(l)
	}
	if q.Parent != "" {
		pick(ix.children[q.Parent])
	}
	if q.Type != "" {
		pick(ix.byType[q.Type])
	}
	for _, pm := range q.Props {
		pick(ix.propCandidates(pm))
	}
	if q.criteria() == 1 && ok {
		return slices.Clone(cand) // the one posting list is the answer
	}
	var out []*entry
	for _, e := range cand {
		if q.matches(e) {
			out = append(out, e)
		}
	}
	return out
}

// criteria counts the conditions of q.
func (q HardwareQuery) criteria() int {
	n := len(q.Props)
	for _, s := range []string{q.Xname, q.Parent, q.Type, string(q.Class)} {
		if s != "" {
			n++
		}
	}
	return n
}

// propCandidates is the posting list of pm, merged across its field spellings.
func (ix *index) propCandidates(pm PropMatch) []*entry {
	if len(pm.Fields) == 1 {
		return ix.byProp[pm.Fields[0]][pm.Value]
	}
	var l []*entry
	for _, f := range pm.Fields {
		l = append(l, ix.byProp[f][pm.Value]...)
	}
	slices.SortFunc(l, cmpEntry)
	return slices.Compact(l)
}

func (q HardwareQuery) matches(e *entry) bool {
	switch {
	case q.Xname != "" && e.xname != q.Xname,
		q.Parent != "" && e.parent != q.Parent,
		q.Type != "" && e.stype != q.Type,
		q.Class != "" && e.class != q.Class:
		return false
	}
	for _, pm := range q.Props {
		if !e.hasProp(pm) {
			return false
		}
	}
	return true
}

func (e *entry) hasProp(pm PropMatch) bool {
	for _, p := range e.props {
		if p.value == pm.Value && slices.Contains(pm.Fields, p.field) {
			return true
		}
	}
	return false
}

// removeAll drops many entries, filtering each affected list once rather than
// once per entry, so deleting a cabinet stays linear in the index size.
func (ix *index) removeAll(doomed []*entry) {
	if len(doomed) < 16 {
		for _, e := range doomed {
			ix.remove(e)
		}
		return
	}
	gone := make(map[*entry]struct{}, len(doomed))
	for _, e := range doomed {
		gone[e] = struct{}{}
		delete(ix.byXname, e.xname)
	}
	isGone := func(e *entry) bool { _, ok := gone[e]; return ok }
	ix.all = slices.DeleteFunc(ix.all, isGone)
	seen := make(map[string]bool)
	filter := func(m map[string][]*entry, tag, key string) {
		if seen[tag+"\x00"+key] {
			return
		}
		seen[tag+"\x00"+key] = true
		if l, ok := m[key]; ok {
			if tag == "parent" {
				l = slices.Clone(l) // children lists are copy-on-write
			}
			l = slices.DeleteFunc(l, isGone)
			switch {
			case tag == "parent":
				ix.setChildren(key, l)
			case len(l) == 0:
				delete(m, key)
			default:
				m[key] = l
			}
		}
	}
	for _, e := range doomed {
		filter(ix.children, "parent", e.parent)
		filter(ix.byType, "type", e.stype)
		for _, p := range e.props {
			if m := ix.byProp[p.field]; m != nil {
				filter(m, "prop:"+p.field, p.value)
				if len(m) == 0 {
					delete(ix.byProp, p.field)
				}
			}
		}
	}
}
