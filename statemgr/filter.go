package statemgr

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
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

// match is one filter parameter: values OR'd together, "!" values AND'd as
// exclusions.
type match struct {
	pos, neg []string
}

func (m *match) empty() bool { return len(m.pos) == 0 && len(m.neg) == 0 }

func (m *match) ok(v string, fold bool) bool {
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

// Filter is a parsed component query. The zero Filter matches everything.
type Filter struct {
	ids, types, states, flags, roles, subRoles match
	enabled, softwareStatus, subtypes, arches  match
	classes                                    match
	nids                                       []int
	nidRanges                                  [][2]int
	hasNID                                     bool
	Partition, Group                           string
	Projection                                 Projection
	// members, when non-nil, restricts the result to these IDs (resolved
	// group and partition membership).
	members map[string]bool
	// outside, when non-nil, excludes these IDs (partition=NULL: members of
	// any partition).
	outside map[string]bool
	// under, when set, restricts to this xname and its descendants.
	under string
}

// filterParams are the query parameters GET /State/Components accepts.
var filterParams = []string{"id", "type", "state", "flag", "role", "subrole", "enabled", "softwarestatus",
	"subtype", "arch", "class", "nid", "nid_start", "nid_end", "partition", "group",
	"stateonly", "flagonly", "roleonly", "nidonly"}

// ParseFilter parses component query parameters. Unknown parameter names and
// bad values are ErrInvalid naming the parameter.
func ParseFilter(q url.Values, v *Vocab) (Filter, error) {
	var f Filter
	for k := range q {
		if !slices.Contains(filterParams, strings.ToLower(k)) {
			return f, problem.Invalidf("query parameter %q: unknown filter", k)
		}
	}
	get := func(name string) []string {
		var out []string
		for k, vs := range q {
			if strings.EqualFold(k, name) {
				out = append(out, vs...)
			}
		}
		return out
	}
	fields := map[string][]string{}
	for _, p := range filterParams {
		fields[p] = get(p)
	}
	return f, f.set(fields, v.get())
}

// set fills f from parameter name -> values.
func (f *Filter) set(p map[string][]string, vs *vocabSet) error {
	steps := []struct {
		name string
		m    *match
		norm func(string) (string, bool)
	}{
		{"id", &f.ids, normID},
		{"type", &f.types, normType},
		{"state", &f.states, States.Normalize},
		{"flag", &f.flags, Flags.Normalize},
		{"role", &f.roles, vs.roles.Normalize},
		{"subrole", &f.subRoles, vs.subRoles.Normalize},
		{"enabled", &f.enabled, normBool},
		{"softwarestatus", &f.softwareStatus, nil},
		{"subtype", &f.subtypes, nil},
		{"arch", &f.arches, Arches.Normalize},
		{"class", &f.classes, Classes.Normalize},
	}
	for _, s := range steps {
		if err := parseMatch(s.name, p[s.name], s.m, s.norm); err != nil {
			return err
		}
	}
	if err := f.setNIDs(p["nid"], p["nid_start"], p["nid_end"]); err != nil {
		return err
	}
	if v := p["partition"]; len(v) > 0 {
		f.Partition = v[0]
	}
	if v := p["group"]; len(v) > 0 {
		f.Group = v[0]
	}
	for name, proj := range map[string]Projection{"stateonly": ProjectState, "flagonly": ProjectFlag, "roleonly": ProjectRole, "nidonly": ProjectNID} {
		for _, v := range p[name] {
			on, err := strconv.ParseBool(v)
			if v == "" {
				on, err = true, nil
			}
			if err != nil {
				return problem.Invalidf("query parameter %s: %q is not a boolean", name, v)
			}
			if on {
				f.Projection = proj
			}
		}
	}
	return nil
}

func parseMatch(name string, vals []string, m *match, norm func(string) (string, bool)) error {
	for _, v := range vals {
		neg := strings.HasPrefix(v, "!")
		v = strings.TrimPrefix(v, "!")
		if v == "" {
			continue
		}
		if norm != nil {
			n, ok := norm(v)
			if !ok {
				return problem.Invalidf("query parameter %s: invalid value %q", name, v)
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
	atoi := func(name, s string) (int, error) {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return 0, problem.Invalidf("query parameter %s: %q is not an integer", name, s)
		}
		return n, nil
	}
	for _, s := range nids {
		n, err := atoi("nid", s)
		if err != nil {
			return err
		}
		f.nids = append(f.nids, n)
	}
	for i := 0; i < max(len(starts), len(ends)); i++ {
		r := [2]int{-1 << 62, 1 << 62}
		var err error
		if i < len(starts) {
			if r[0], err = atoi("nid_start", starts[i]); err != nil {
				return err
			}
		}
		if i < len(ends) {
			if r[1], err = atoi("nid_end", ends[i]); err != nil {
				return err
			}
		}
		f.nidRanges = append(f.nidRanges, r)
	}
	f.hasNID = len(f.nids) > 0 || len(f.nidRanges) > 0
	return nil
}

func normID(s string) (string, bool) {
	if !xname.Valid(s) {
		return "", false
	}
	return xname.Normalize(s), true
}

func normType(s string) (string, bool) {
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

// Match reports whether r passes every filter.
func (f *Filter) match(r *record) bool {
	if (f.members != nil && !f.members[r.ID]) || f.outside[r.ID] {
		return false
	}
	if f.under != "" && !isUnder(r.ID, f.under) {
		return false
	}
	if !f.ids.ok(r.ID, false) || !f.types.ok(r.Type, false) || !f.states.ok(r.State, false) ||
		!f.flags.ok(r.Flag, false) || !f.roles.ok(r.Role, false) || !f.subRoles.ok(r.SubRole, false) ||
		!f.softwareStatus.ok(r.SoftwareStatus, true) || !f.subtypes.ok(r.Subtype, true) ||
		!f.arches.ok(r.Arch, false) || !f.classes.ok(r.Class, false) {
		return false
	}
	if !f.enabled.empty() && !f.enabled.ok(strconv.FormatBool(r.Enabled), false) {
		return false
	}
	if f.hasNID {
		return r.HasNID && f.nidOK(r.NID)
	}
	return true
}

func (f *Filter) nidOK(n int) bool {
	if slices.Contains(f.nids, n) {
		return true
	}
	for _, r := range f.nidRanges {
		if n >= r[0] && n <= r[1] {
			return true
		}
	}
	return false
}

// isUnder reports whether id is parent or a descendant of parent.
func isUnder(id, parent string) bool {
	if parent == "s0" || parent == "all" || parent == "all_comp" {
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

// all reports whether f selects every component with every field.
func (f *Filter) all() bool {
	for _, m := range []*match{&f.ids, &f.types, &f.states, &f.flags, &f.roles, &f.subRoles, &f.enabled,
		&f.softwareStatus, &f.subtypes, &f.arches, &f.classes} {
		if !m.empty() {
			return false
		}
	}
	return !f.hasNID && f.Partition == "" && f.Group == "" && f.Projection == ProjectFull &&
		f.members == nil && f.outside == nil && f.under == ""
}
