package core

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// Projection selects the fields a component listing carries.
type Projection int

// The projections of GET /State/Components.
const (
	ProjectFull Projection = iota
	ProjectState
	ProjectFlag
	ProjectRole
	ProjectNID
)

// Match is one filter parameter: values OR'd together, "!" values AND'd as
// exclusions.
type Match struct {
	pos, neg []string
	// posSet holds pos when it is long (an ID list of thousands): OK is
	// then a map look-up instead of a walk of pos for every component.
	posSet map[string]struct{}
}

// indexMin is the length from which index builds posSet.
const indexMin = 16

// index builds m.posSet for a long pos list of exact (not folded) values.
func (m *Match) index() {
	if len(m.pos) < indexMin {
		return
	}
	m.posSet = make(map[string]struct{}, len(m.pos))
	for _, v := range m.pos {
		m.posSet[v] = struct{}{}
	}
}

func (m *Match) empty() bool { return len(m.pos) == 0 && len(m.neg) == 0 }

// OK reports whether v passes m; fold compares without regard to case.
func (m *Match) OK(v string, fold bool) bool {
	if m.posSet != nil && !fold {
		if _, ok := m.posSet[v]; !ok {
			return false
		}
		return len(m.neg) == 0 || !slices.Contains(m.neg, v)
	}
	eq := func(s string) bool {
		if fold {
			return strings.EqualFold(s, v)
		}
		return s == v
	}
	if len(m.pos) > 0 && !slices.ContainsFunc(m.pos, eq) {
		return false
	}
	return !slices.ContainsFunc(m.neg, eq)
}

// okSet is ok for a component in the groups (or the partition) in: a value
// matches if it is one of them, and the value "null" matches a component in
// none.
func (m *Match) okSet(in []string) bool {
	has := func(v string) bool {
		if v == nullGroup {
			return len(in) == 0
		}
		return slices.Contains(in, v)
	}
	if len(m.pos) > 0 && !slices.ContainsFunc(m.pos, has) {
		return false
	}
	return !slices.ContainsFunc(m.neg, has)
}

// nullGroup is the group and partition filter value meaning "in none".
const nullGroup = "null"

// Filter is a parsed component selection: the filters of GET /State/Components
// and /memberships, GET /locks/status, the body of POST /State/Components/Query
// and the locks calls. Every listing parses its filters once into a Filter and
// evaluates them with match, so the same filter answers the same everywhere.
// The zero Filter matches everything.
type Filter struct {
	ids, types, states, flags, roles, subRoles  Match
	enabled, softwareStatus, subtypes, netTypes Match
	arches, classes                             Match
	groups, partitions                          Match
	nids                                        []int
	nidSet                                      map[int]struct{} // nids, when long
	NIDRanges                                   [][2]int
	HasNID                                      bool
	Projection                                  Projection
	// Under, when set, restricts to this xname and its descendants.
	Under string
	// GroupsOf is where match looks up a component's groups and partition;
	// the Store sets it, under the group index's read lock, before matching.
	GroupsOf func(id string) *CompGroups
}

// The filter parameter names, lower case. HSM matches them without regard to
// case: it decodes the query string into its filter struct with
// encoding/json.
var (
	// ComponentParams are the filters of GET /State/Components and
	// /memberships (hms-behavior 5.1: "the same filters as Components").
	ComponentParams = []string{"id", "type", "state", "flag", "role", "subrole", "enabled", "softwarestatus",
		"subtype", "nettype", "arch", "class", "nid", "nid_start", "nid_end", "partition", "group"}
	// projectionParams are the projections of the component listings.
	projectionParams = []string{"stateonly", "flagonly", "roleonly", "nidonly"}
	// ListParams are the parameters of the component listings.
	ListParams = append(slices.Clone(ComponentParams), projectionParams...)
	// LockStatusParams are the component filters GET /locks/status takes in
	// shipped HSM; it ignores the others.
	LockStatusParams = []string{"type", "state", "role", "subrole"}
)

// ParseFilter parses the component filters and projections of a query string.
// Unknown parameters are ignored, as shipped HSM ignores them; a bad value of
// a known filter is ErrInvalid with HSM's text (hms-messages 1.2).
func ParseFilter(q url.Values, v *Vocab) (Filter, error) {
	f, _, err := parseQuery(q, v, ListParams)
	return f, err
}

// parseQuery parses the parameters of q named in params and returns the
// names of the parameters it ignored (neither in params nor in other).
func parseQuery(q url.Values, v *Vocab, params []string, other ...string) (Filter, []string, error) {
	fields := map[string][]string{}
	for k, vs := range q {
		if lk := strings.ToLower(k); slices.Contains(params, lk) {
			fields[lk] = append(fields[lk], vs...)
		}
	}
	var f Filter
	return f, IgnoredParams(q, params, other), f.Set(fields, v.Get())
}

// IgnoredParams returns the names of q's parameters that are in none of the
// known lists (lower case), sorted.
func IgnoredParams(q url.Values, known ...[]string) []string {
	var out []string
	for k := range q {
		lk := strings.ToLower(k)
		if !slices.ContainsFunc(known, func(names []string) bool { return slices.Contains(names, lk) }) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// Set fills f from parameter name (lower case) -> values.
func (f *Filter) Set(p map[string][]string, vs *VocabSet) error {
	steps := []struct {
		name string
		m    *Match
		norm func(string) (string, bool)
		bad  string
	}{
		{"id", &f.ids, NormID, "Argument was not a valid xname ID"},
		{"type", &f.types, NormType, "Argument was not a valid HMS Type"},
		{"state", &f.states, hsm.States.Normalize, "Argument was not a valid HMS State"},
		{"flag", &f.flags, hsm.Flags.Normalize, "Argument was not a valid HMS Flag"},
		{"role", &f.roles, vs.Roles.Normalize, "Argument was not a valid HMS Role"},
		{"subrole", &f.subRoles, vs.SubRoles.Normalize, "Argument was not a valid HMS SubRole"},
		{"enabled", &f.enabled, normBool, "a required argument did not match any valid input"},
		{"softwarestatus", &f.softwareStatus, nil, ""},
		{"subtype", &f.subtypes, nil, ""},
		{"nettype", &f.netTypes, hsm.NetTypes.Normalize, "Argument was not valid"},
		{"arch", &f.arches, hsm.Arches.Normalize, "Argument was not a valid HMS Arch"},
		{"class", &f.classes, hsm.Classes.Normalize, "Argument was not a valid HMS Class"},
		{"group", &f.groups, normGroup, "group or partition field has invalid characters"},
		{"partition", &f.partitions, normGroup, "group or partition field has invalid characters"},
	}
	for _, s := range steps {
		bad := func(string) error { return problem.Invalidf("%s", s.bad) }
		if err := parseValues(p[s.name], s.m, s.norm, bad); err != nil {
			return err
		}
	}
	f.ids.index()
	if err := f.setNIDs(p["nid"], p["nid_start"], p["nid_end"]); err != nil {
		return err
	}
	for _, name := range projectionParams {
		for _, v := range p[name] {
			on, err := strconv.ParseBool(v)
			if v == "" {
				on, err = true, nil
			}
			if err != nil {
				return problem.Invalidf("a required argument did not match any valid input")
			}
			if on {
				f.Projection = map[string]Projection{"stateonly": ProjectState, "flagonly": ProjectFlag,
					"roleonly": ProjectRole, "nidonly": ProjectNID}[name]
			}
		}
	}
	return nil
}

// ParseMatch parses the values of query parameter name into m; a bad value
// is ErrInvalid naming the parameter (the inventory queries' wording).
func ParseMatch(name string, vals []string, m *Match, norm func(string) (string, bool)) error {
	return parseValues(vals, m, norm, func(v string) error {
		return problem.Invalidf("query parameter %s: invalid value %q", name, v)
	})
}

// parseValues adds vals to m: a "!" prefix makes a value an exclusion, norm
// (if not nil) validates and normalises, bad makes the error for a value
// norm refuses.
func parseValues(vals []string, m *Match, norm func(string) (string, bool), bad func(v string) error) error {
	for _, v := range vals {
		v, neg := strings.CutPrefix(strings.TrimSpace(v), "!")
		if v == "" {
			continue
		}
		if norm != nil {
			n, ok := norm(v)
			if !ok {
				return bad(v)
			}
			v = n
		}
		if neg {
			m.neg = append(m.neg, v)
		} else {
			m.pos = append(m.pos, v)
		}
	}
	return nil
}

func (f *Filter) setNIDs(nids, starts, ends []string) error {
	atoi := func(s string) (int, error) {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return 0, problem.Invalidf("a required argument was not an integer")
		}
		return n, nil
	}
	for _, s := range nids {
		n, err := atoi(s)
		if err != nil {
			return err
		}
		f.nids = append(f.nids, n)
	}
	for i := 0; i < max(len(starts), len(ends)); i++ {
		r := [2]int{-1 << 62, 1 << 62}
		var err error
		if i < len(starts) {
			if r[0], err = atoi(starts[i]); err != nil {
				return err
			}
		}
		if i < len(ends) {
			if r[1], err = atoi(ends[i]); err != nil {
				return err
			}
		}
		f.NIDRanges = append(f.NIDRanges, r)
	}
	f.HasNID = len(f.nids) > 0 || len(f.NIDRanges) > 0
	if len(f.nids) >= indexMin {
		f.nidSet = make(map[int]struct{}, len(f.nids))
		for _, n := range f.nids {
			f.nidSet[n] = struct{}{}
		}
	}
	return nil
}

func NormID(s string) (string, bool) {
	if !xname.Valid(s) {
		return "", false
	}
	return xname.Normalize(s), true
}

func NormType(s string) (string, bool) {
	t, ok := xname.ParseType(s)
	return string(t), ok
}

func normBool(s string) (string, bool) {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return "", false
	}
	return strconv.FormatBool(b), true
}

// normGroup normalises a group label or partition name; "NULL" (any case)
// means "in none".
func normGroup(s string) (string, bool) {
	l, err := Label("group", s)
	return l, err == nil
}

// Match reports whether r passes every filter.
func (f *Filter) Match(r *Record) bool {
	if f.Under != "" && !isUnder(r.ID, f.Under) {
		return false
	}
	if !f.ids.OK(r.ID, false) || !f.types.OK(r.Type, false) || !f.states.OK(r.State, false) ||
		!f.flags.OK(r.Flag, false) || !f.roles.OK(r.Role, false) || !f.subRoles.OK(r.SubRole, false) ||
		!f.softwareStatus.OK(r.SoftwareStatus, true) || !f.subtypes.OK(r.Subtype, true) ||
		!f.netTypes.OK(r.NetType, false) || !f.arches.OK(r.Arch, false) || !f.classes.OK(r.Class, false) {
		return false
	}
	if !f.enabled.empty() && !f.enabled.OK(strconv.FormatBool(r.Enabled), false) {
		return false
	}
	if f.HasNID && (!r.HasNID || !f.nidOK(r.NID)) {
		return false
	}
	if f.byGroup() {
		var g *CompGroups
		if f.GroupsOf != nil {
			g = f.GroupsOf(r.ID)
		}
		return f.groups.okSet(g.GroupList()) && f.partitions.okSet(g.partitionList())
	}
	return true
}

// byGroup reports whether f filters on group or partition membership.
func (f *Filter) byGroup() bool { return !f.groups.empty() || !f.partitions.empty() }

func (f *Filter) nidOK(n int) bool {
	if f.nidSet != nil {
		if _, ok := f.nidSet[n]; ok {
			return true
		}
	} else if slices.Contains(f.nids, n) {
		return true
	}
	for _, r := range f.NIDRanges {
		if n >= r[0] && n <= r[1] {
			return true
		}
	}
	return false
}

// isUnder reports whether id is parent or a descendant of parent.
func isUnder(id, parent string) bool {
	if isAllParent(parent) {
		return true
	}
	if !strings.HasPrefix(id, parent) {
		return false
	}
	if len(id) == len(parent) {
		return true
	}
	c := id[len(parent)]
	return c >= 'a' && c <= 'z'
}

// isAllParent reports whether parent names the whole system.
func isAllParent(parent string) bool {
	return parent == "s0" || parent == "all" || parent == "all_comp"
}

// All reports whether f selects every component with every field.
func (f *Filter) All() bool {
	return f.SelectsAll() && f.Projection == ProjectFull
}

// SelectsAll reports whether f selects every component.
func (f *Filter) SelectsAll() bool {
	for _, m := range []*Match{&f.ids, &f.types, &f.states, &f.flags, &f.roles, &f.subRoles, &f.enabled,
		&f.softwareStatus, &f.subtypes, &f.netTypes, &f.arches, &f.classes, &f.groups, &f.partitions} {
		if !m.empty() {
			return false
		}
	}
	return !f.HasNID && f.Under == ""
}
