package statemgr

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
)

// glSelection selects components by the HSM component filters, as /memberships
// (query string) and the locks v2 API (JSON body) take them. It compiles to one SQL
// WHERE clause over "components c", so a selection never scans more than SQLite
// must.
type glSelection struct {
	terms []glTerm
	// ranges are the nid_start/nid_end pairs, ORed.
	ranges [][2]*int
}

// glTerm is one filter: a SQL expression template over c with one "?" per value.
// Values without "!" are ORed; values with "!" exclude.
type glTerm struct {
	in, notIn []any
	expr      func(n int) string // "expr IN (?, ...)" with n placeholders
	// orSQL are conditions without arguments ORed with the values (NULL:
	// in no partition); andSQL are ANDed like excluded values (!NULL).
	orSQL, andSQL []string
}

// glFilterField describes how a filter name is validated and compiled.
type glFilterField struct {
	name  string
	canon func(field, v string) (any, error)
	expr  func(n int) string
}

var glStates = []string{"Unknown", "Empty", "Populated", "Off", "On", "Standby", "Halt", "Ready"}
var glFlags = []string{"Unknown", "OK", "Warning", "Alert", "Locked"}

func glColumnIn(col string) func(int) string {
	return func(n int) string { return col + " IN (" + glPlaceholders(n) + ")" }
}

func glLowerIn(col string) func(int) string {
	return func(n int) string { return "LOWER(" + col + ") IN (" + glPlaceholders(n) + ")" }
}

func glMemberIn(kind string) func(int) string {
	return func(n int) string {
		return "c.id IN (SELECT m.component_id FROM component_group_members m JOIN component_groups g ON g.name = m.group_name WHERE g.type = '" +
			kind + "' AND g.name IN (" + glPlaceholders(n) + "))"
	}
}

func glPlaceholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

func glCanonXname(field, v string) (any, error) {
	x, err := xname.Parse(v)
	if err != nil {
		return nil, problem.Invalidf("%s: %v", field, err)
	}
	return x.String(), nil
}

func glCanonType(field, v string) (any, error) {
	t, ok := xname.ParseType(v)
	if !ok {
		return nil, problem.Invalidf("%s: unknown component type %q", field, v)
	}
	return string(t), nil
}

func glCanonEnum(list []string) func(field, v string) (any, error) {
	return func(field, v string) (any, error) {
		if strings.EqualFold(v, "warn") && slices.Contains(list, "Warning") {
			return "Warning", nil
		}
		for _, s := range list {
			if strings.EqualFold(s, v) {
				return s, nil
			}
		}
		return nil, problem.Invalidf("%s: %q is not one of %s", field, v, strings.Join(list, ", "))
	}
}

func glCanonLower(field, v string) (any, error) { return strings.ToLower(v), nil }

func glCanonBool(field, v string) (any, error) {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return nil, problem.Invalidf("%s: %q is not true or false", field, v)
	}
	if b {
		return 1, nil
	}
	return 0, nil
}

func glCanonInt(field, v string) (any, error) {
	n, err := strconv.Atoi(v)
	if err != nil {
		return nil, problem.Invalidf("%s: %q is not an integer", field, v)
	}
	return n, nil
}

func glCanonLabel(field, v string) (any, error) {
	l, err := glLabel(field, v)
	return l, err
}

// glFilterFields are the component filters, by query parameter name.
var glFilterFields = []glFilterField{
	{name: "id", canon: glCanonXname, expr: glColumnIn("c.id")},
	{name: "type", canon: glCanonType, expr: glColumnIn("c.type")},
	{name: "state", canon: glCanonEnum(glStates), expr: glColumnIn("c.state")},
	{name: "flag", canon: glCanonEnum(glFlags), expr: glColumnIn("c.flag")},
	{name: "role", canon: glCanonLower, expr: glLowerIn("c.role")},
	{name: "subrole", canon: glCanonLower, expr: glLowerIn("c.sub_role")},
	{name: "enabled", canon: glCanonBool, expr: glColumnIn("c.enabled")},
	{name: "softwarestatus", canon: glCanonLower, expr: glLowerIn("c.software_status")},
	{name: "subtype", canon: glCanonLower, expr: glLowerIn("c.subtype")},
	{name: "arch", canon: glCanonLower, expr: glLowerIn("c.arch")},
	{name: "class", canon: glCanonLower, expr: glLowerIn("c.class")},
	{name: "nid", canon: glCanonInt, expr: glColumnIn("c.nid")},
	{name: "partition", canon: glCanonLabel, expr: glMemberIn(kindPartition)},
	{name: "group", canon: glCanonLabel, expr: glMemberIn(kindGroup)},
}

// add adds the values of one filter; field is the name used in error messages.
func (s *glSelection) add(name, field string, values []string) error {
	i := slices.IndexFunc(glFilterFields, func(f glFilterField) bool { return f.name == name })
	if i < 0 || len(values) == 0 {
		return nil
	}
	f := glFilterFields[i]
	var t glTerm
	t.expr = f.expr
	for _, raw := range values {
		v, neg := strings.CutPrefix(strings.TrimSpace(raw), "!")
		if (name == "partition" || name == "group") && strings.EqualFold(v, "NULL") {
			if neg {
				t.andSQL = append(t.andSQL, glNullMembership(name, true))
			} else {
				t.orSQL = append(t.orSQL, glNullMembership(name, false))
			}
			continue
		}
		if neg && name == "nid" {
			// As /State/Components: a NID is matched, not excluded.
			return problem.Invalidf("%s: %q: negation is not supported for nid", field, raw)
		}
		c, err := f.canon(field, v)
		if err != nil {
			return err
		}
		if neg {
			t.notIn = append(t.notIn, c)
		} else {
			t.in = append(t.in, c)
		}
	}
	if len(t.in)+len(t.notIn)+len(t.orSQL)+len(t.andSQL) > 0 {
		s.terms = append(s.terms, t)
	}
	return nil
}

// glNullMembership is the condition of a component in no partition (or no
// group); negated, in some.
func glNullMembership(name string, neg bool) string {
	kind := kindGroup
	if name == "partition" {
		kind = kindPartition
	}
	not := "NOT "
	if neg {
		not = ""
	}
	return not + "EXISTS (SELECT 1 FROM component_group_members m JOIN component_groups g ON g.name = m.group_name WHERE m.component_id = c.id AND g.type = '" + kind + "')"
}

// addRange adds nid_start/nid_end bounds, paired by position.
func (s *glSelection) addRange(starts, ends []string) error {
	for i := 0; i < max(len(starts), len(ends)); i++ {
		var r [2]*int
		for j, list := range [][]string{starts, ends} {
			if i >= len(list) {
				continue
			}
			v, err := glCanonInt([]string{"nid_start", "nid_end"}[j], list[i])
			if err != nil {
				return err
			}
			n := v.(int)
			r[j] = &n
		}
		s.ranges = append(s.ranges, r)
	}
	return nil
}

// glSelectionFromQuery reads the component filters from a query string. Parameter
// names are matched without regard to case; unknown names are ignored, as HSM does.
func glSelectionFromQuery(q url.Values) (glSelection, error) {
	var s glSelection
	lower := url.Values{}
	for k, vs := range q {
		lk := strings.ToLower(k)
		lower[lk] = append(lower[lk], vs...)
	}
	for _, f := range glFilterFields {
		if err := s.add(f.name, f.name, lower[f.name]); err != nil {
			return s, err
		}
	}
	return s, s.addRange(lower["nid_start"], lower["nid_end"])
}

// where returns the SQL condition (never empty) and its arguments.
func (s *glSelection) where() (string, []any) {
	conds := []string{"1 = 1"}
	var args []any
	for _, t := range s.terms {
		alts := t.orSQL
		if len(t.in) > 0 {
			alts = append([]string{t.expr(len(t.in))}, alts...)
			args = append(args, t.in...)
		}
		if len(alts) > 0 {
			conds = append(conds, "("+strings.Join(alts, " OR ")+")")
		}
		if len(t.notIn) > 0 {
			conds = append(conds, "NOT ("+t.expr(len(t.notIn))+")")
			args = append(args, t.notIn...)
		}
		conds = append(conds, t.andSQL...)
	}
	var ors []string
	for _, r := range s.ranges {
		var and []string
		if r[0] != nil {
			and = append(and, "c.nid >= ?")
			args = append(args, *r[0])
		}
		if r[1] != nil {
			and = append(and, "c.nid <= ?")
			args = append(args, *r[1])
		}
		ors = append(ors, "("+strings.Join(and, " AND ")+")")
	}
	if len(ors) > 0 {
		conds = append(conds, "("+strings.Join(ors, " OR ")+")")
	}
	return strings.Join(conds, " AND "), args
}

// empty reports whether the selection has no filters at all (selects everything).
func (s *glSelection) empty() bool { return len(s.terms) == 0 && len(s.ranges) == 0 }
