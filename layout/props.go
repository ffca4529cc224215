package layout

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
)

// prop is one searchable (field, value) pair of an object's ExtraProperties:
// a scalar field, or one scalar element of an array field.
type prop struct {
	field, value string
}

// fieldKind says how the value of a known ExtraProperties field is checked.
type fieldKind int

const (
	kindString fieldKind = iota + 1
	kindUint
	kindStrings
	kindXname
	kindXnames
	kindCabinetNetworks
)

// knownField returns the kind of the field SLS defines for hardware type t;
// field names are matched without regard to case, as Go clients decode them.
func knownField(t xname.Type, field string) (fieldKind, bool) {
	f := strings.ToLower(field)
	switch f {
	case "aliases":
		return kindStrings, true
	case "powerconnector", "powerconenctor":
		return kindXnames, true
	}
	switch t {
	case xname.Node, xname.VirtualNode:
		switch f {
		case "nid":
			return kindUint, true
		case "role", "subrole":
			return kindString, true
		}
	case xname.MgmtSwitch, xname.MgmtHLSwitch, xname.CDUMgmtSwitch:
		switch f {
		case "ip4addr", "ip6addr", "brand", "model", "snmpusername", "snmpauthpassword",
			"snmpauthprotocol", "snmpprivpassword", "snmpprivprotocol":
			return kindString, true
		}
	case xname.MgmtSwitchConnector:
		switch f {
		case "nodenics":
			return kindXnames, true
		case "vendorname":
			return kindString, true
		}
	case xname.NodeBMC, xname.RouterBMC, xname.ChassisBMC, xname.CabinetPDUController, xname.CabinetPDU:
		switch f {
		case "ip4addr", "ip6addr", "username", "password":
			return kindString, true
		}
	case xname.NodeBMCNic, xname.NodeHsnNic:
		switch f {
		case "networks":
			return kindStrings, true
		case "peers":
			return kindXnames, true
		}
	case xname.Cabinet:
		switch f {
		case "model":
			return kindString, true
		case "networks":
			return kindCabinetNetworks, true
		case "dhcprelayswitches":
			return kindStrings, true
		}
	case xname.HSNConnector:
		if f == "object" {
			return kindXnames, true
		}
	case xname.NodePowerConnector:
		if f == "poweredby" {
			return kindXname, true
		}
	}
	return 0, false
}

// secret reports whether a field holds a credential; such values are neither
// indexed for search nor ever written to a log.
func secret(field string) bool {
	return strings.Contains(strings.ToLower(field), "password")
}

// parseExtra checks raw, the ExtraProperties of an object of type t, and
// returns it compacted together with its searchable values. Unknown fields are
// kept; known ones must have the type SLS defines. Error messages name the field
// but never a value, since values may be secrets.
func parseExtra(t xname.Type, raw []byte) ([]byte, []prop, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil, nil
	}
	if raw[0] != '{' {
		return nil, nil, problem.Invalidf("ExtraProperties: must be a JSON object")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, nil, problem.Invalidf("ExtraProperties: malformed JSON object")
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var props []prop
	for _, k := range keys {
		v := m[k]
		kind, known := knownField(t, k)
		if known {
			if err := checkKind(kind, v); err != nil {
				return nil, nil, problem.Invalidf("ExtraProperties.%s: %v", k, err)
			}
		}
		if !secret(k) {
			props = appendProps(props, k, v, kind == kindXname || kind == kindXnames)
		}
	}
	var buf bytes.Buffer
	buf.Grow(len(raw))
	if err := json.Compact(&buf, raw); err != nil {
		return nil, nil, problem.Invalidf("ExtraProperties: malformed JSON object")
	}
	return buf.Bytes(), props, nil
}

func checkKind(kind fieldKind, v json.RawMessage) error {
	if string(v) == "null" {
		return nil
	}
	switch kind {
	case kindString:
		if v[0] != '"' {
			return errors.New("must be a string")
		}
	case kindUint:
		var n int64
		if err := json.Unmarshal(v, &n); err != nil || n < 0 {
			return errors.New("must be a non-negative integer")
		}
	case kindStrings:
		var ss []string
		if err := json.Unmarshal(v, &ss); err != nil {
			return errors.New("must be an array of strings")
		}
	case kindXname:
		var s string
		if err := json.Unmarshal(v, &s); err != nil || !xname.Valid(s) {
			return errors.New("must be an xname")
		}
	case kindXnames:
		var ss []string
		if err := json.Unmarshal(v, &ss); err != nil {
			return errors.New("must be an array of xnames")
		}
		for i, s := range ss {
			if !xname.Valid(s) {
				return fmt.Errorf("element %d: %q is not a valid xname", i, s)
			}
		}
	case kindCabinetNetworks:
		var n map[string]map[string]CabinetNetwork
		if err := json.Unmarshal(v, &n); err != nil {
			var ute *json.UnmarshalTypeError
			if errors.As(err, &ute) && ute.Field != "" {
				return fmt.Errorf("field %s: expected %s", ute.Field, ute.Type)
			}
			return errors.New("must be an object of network classes, each an object of networks")
		}
	}
	return nil
}

// appendProps adds the searchable values of field k: a scalar value, or each
// scalar element of an array. Objects are not indexed. Xname values are
// normalised so searches match however the client spelt them.
func appendProps(props []prop, k string, v json.RawMessage, isXname bool) []prop {
	if len(v) == 0 {
		return props
	}
	if v[0] == '[' {
		var elems []json.RawMessage
		if json.Unmarshal(v, &elems) != nil {
			return props
		}
		for _, e := range elems {
			if s, ok := scalarText(e); ok {
				props = append(props, prop{field: k, value: normIf(s, isXname)})
			}
		}
		return props
	}
	if s, ok := scalarText(v); ok {
		props = append(props, prop{field: k, value: normIf(s, isXname)})
	}
	return props
}

func normIf(s string, isXname bool) string {
	if isXname {
		return xname.Normalize(s)
	}
	return s
}

// scalarText is the text a search value is compared with: a string's
// contents, or the literal of a number or boolean.
func scalarText(v json.RawMessage) (string, bool) {
	if len(v) == 0 {
		return "", false
	}
	switch c := v[0]; {
	case c == '"':
		if bytes.IndexByte(v, '\\') < 0 {
			return string(v[1 : len(v)-1]), true
		}
		var s string
		if json.Unmarshal(v, &s) != nil {
			return "", false
		}
		return s, true
	case c == '-' || (c >= '0' && c <= '9'), c == 't', c == 'f':
		return string(v), true
	}
	return "", false
}
