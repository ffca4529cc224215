package layout

import (
	"net/netip"
	"net/url"
	"sort"
	"strings"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/layout/sls"
)

// HardwareQuery is a parsed /search/hardware query. Empty fields match
// anything; an object must match every non-empty one.
type HardwareQuery struct {
	Xname  string
	Parent string
	Class  Class
	Type   string // comptype_*
	Props  []PropMatch
}

// PropMatch matches objects whose ExtraProperties field (under any of the
// spellings in Fields) equals Value, or is an array with an element equal to it.
// Numbers and booleans compare by their JSON text.
type PropMatch struct {
	Fields []string
	Value  string
}

// extraPrefix starts a query parameter that searches one ExtraProperties field.
const extraPrefix = sls.ExtraPrefix

// namedParam maps a named hardware search parameter onto the ExtraProperties
// fields it searches, and says whether its value is an xname.
func namedParam(k string) (fields []string, isXname, ok bool) {
	switch k {
	case "power_connector":
		return []string{"PowerConnector", "PowerConenctor"}, true, true
	case "object":
		return []string{"Object"}, true, true
	case "node_nics":
		return []string{"NodeNics"}, true, true
	case "networks":
		return []string{"Networks"}, false, true
	case "peers":
		return []string{"Peers"}, true, true
	}
	return nil, false, false
}

// extraMatch is the match of an extra_properties.<Field>=v parameter. Stored
// xname values are normalised, so an xname searched for in an xname field is
// too.
func extraMatch(k, v string) (PropMatch, error) {
	f, err := extraField(k)
	if xnameField(f) {
		if x, perr := xname.Parse(v); perr == nil {
			v = x.String()
		}
	}
	return PropMatch{Fields: []string{f}, Value: v}, err
}

// xnameField reports whether the ExtraProperties field f holds xnames (the
// fields the named parameters with xname values search).
func xnameField(f string) bool {
	for _, k := range []string{"power_connector", "object", "node_nics", "peers"} {
		fields, _, _ := namedParam(k)
		for _, n := range fields {
			if strings.EqualFold(n, f) {
				return true
			}
		}
	}
	return false
}

// ParseHardwareSearch parses the raw query string of a /search/hardware request.
// Unknown, repeated or empty parameters and malformed values are ErrInvalid
// errors naming the parameter.
func ParseHardwareSearch(rawQuery string) (HardwareQuery, error) {
	var q HardwareQuery
	vals, err := queryValues(rawQuery)
	if err != nil {
		return q, err
	}
	for _, k := range sortedKeys(vals) {
		v := vals[k]
		switch {
		case k == "xname":
			q.Xname, err = xnameParam(k, v)
		case k == "parent":
			q.Parent, err = xnameParam(k, v)
		case k == "class":
			q.Class, err = ParseClass(v)
			if err != nil {
				err = problem.Invalidf("query parameter class: %v", err)
			}
		case k == "type":
			if _, ok := xname.FromSLSType(v); !ok {
				err = problem.Invalidf("query parameter type: unknown hardware type %q (expected a comptype_* name)", v)
			}
			q.Type = v
		case strings.HasPrefix(k, extraPrefix):
			var m PropMatch
			m, err = extraMatch(k, v)
			q.Props = append(q.Props, m)
		default:
			fields, isXname, ok := namedParam(k)
			if !ok {
				return q, problem.Invalidf("unknown query parameter %q; valid ones are xname, parent, class, type, power_connector, object, node_nics, networks, peers and extra_properties.<Field>", k)
			}
			if isXname {
				v, err = xnameParam(k, v)
			}
			q.Props = append(q.Props, PropMatch{Fields: fields, Value: v})
		}
		if err != nil {
			return HardwareQuery{}, err
		}
	}
	return q, nil
}

// NetworkQuery is a parsed /search/networks query. Empty fields match anything.
type NetworkQuery struct {
	Name      string
	FullName  string
	Type      string
	IPAddress netip.Addr
	Props     []PropMatch
}

// ParseNetworkSearch parses the raw query string of a /search/networks request.
func ParseNetworkSearch(rawQuery string) (NetworkQuery, error) {
	var q NetworkQuery
	vals, err := queryValues(rawQuery)
	if err != nil {
		return q, err
	}
	for _, k := range sortedKeys(vals) {
		v := vals[k]
		switch {
		case k == "name":
			q.Name = v
		case k == "full_name":
			q.FullName = v
		case k == "type":
			q.Type, err = parseNetworkType(v)
			if err != nil {
				err = problem.Invalidf("query parameter %v", err)
			}
		case k == "ip_address":
			q.IPAddress, err = netip.ParseAddr(v)
			if err != nil {
				err = problem.Invalidf("query parameter ip_address: %q is not an IP address", v)
			}
		case strings.HasPrefix(k, extraPrefix):
			var m PropMatch
			m, err = extraMatch(k, v)
			q.Props = append(q.Props, m)
		default:
			return q, problem.Invalidf("unknown query parameter %q; valid ones are name, full_name, type, ip_address and extra_properties.<Field>", k)
		}
		if err != nil {
			return NetworkQuery{}, err
		}
	}
	return q, nil
}

// queryValues parses rawQuery into one non-empty value per parameter.
func queryValues(rawQuery string) (map[string]string, error) {
	vals, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil, problem.Invalidf("malformed query string: %v", err)
	}
	out := make(map[string]string, len(vals))
	for k, vs := range vals {
		switch {
		case len(vs) > 1:
			return nil, problem.Invalidf("query parameter %q given %d times; give it once", k, len(vs))
		case vs[0] == "":
			return nil, problem.Invalidf("query parameter %q: empty value", k)
		}
		out[k] = vs[0]
	}
	return out, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func xnameParam(k, v string) (string, error) {
	x, err := xname.Parse(v)
	if err != nil {
		return "", problem.Invalidf("query parameter %s: %v", k, err)
	}
	return x.String(), nil
}

func extraField(k string) (string, error) {
	f := strings.TrimPrefix(k, extraPrefix)
	switch {
	case f == "":
		return "", problem.Invalidf("query parameter %q: missing the field name after %q", k, extraPrefix)
	case secret(f):
		return "", problem.Invalidf("query parameter %q: credential fields cannot be searched", k)
	}
	return f, nil
}
