package layout

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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
	var lower [24]byte
	if len(field) > len(lower) {
		return 0, false
	}
	for i := 0; i < len(field); i++ {
		c := field[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	f := string(lower[:len(field)])
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
	const word = "password"
	for i := 0; i+len(word) <= len(field); i++ {
		if strings.EqualFold(field[i:i+len(word)], word) {
			return true
		}
	}
	return false
}

// interner shares the strings of repeated field names across the objects of
// one load; nil interns nothing.
type interner map[string]string

func (in interner) str(b []byte) string {
	if in == nil {
		return string(b)
	}
	if s, ok := in[string(b)]; ok {
		return s
	}
	s := string(b)
	in[s] = s
	return s
}

// parseExtra checks raw, the ExtraProperties of an object of type t, and
// returns it compacted together with its searchable values. Unknown fields are
// kept; known ones must have the type SLS defines. Error messages name the field
// but never a value, since values may be secrets. The result may share raw's
// bytes.
func parseExtra(t xname.Type, raw []byte, names interner) ([]byte, []prop, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil, nil
	}
	if raw[0] != '{' {
		return nil, nil, problem.Invalidf("ExtraProperties: must be a JSON object")
	}
	if !json.Valid(raw) {
		return nil, nil, problem.Invalidf("ExtraProperties: malformed JSON object")
	}
	var props []prop
	err := eachMember(raw, func(k, v []byte) error {
		var key string
		if bytes.IndexByte(k, '\\') < 0 {
			key = names.str(k[1 : len(k)-1])
		} else {
			key = unquote(k)
		}
		kind, known := knownField(t, key)
		if known {
			if err := checkKind(kind, v); err != nil {
				return problem.Invalidf("ExtraProperties.%s: %v", key, err)
			}
		}
		if !secret(key) {
			props = appendProps(props, key, v, kind == kindXname || kind == kindXnames)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if !hasSpace(raw) {
		return raw, props, nil
	}
	var buf bytes.Buffer
	buf.Grow(len(raw))
	if err := json.Compact(&buf, raw); err != nil {
		return nil, nil, problem.Invalidf("ExtraProperties: malformed JSON object")
	}
	return buf.Bytes(), props, nil
}

func checkKind(kind fieldKind, v []byte) error {
	if string(v) == "null" {
		return nil
	}
	switch kind {
	case kindString:
		if v[0] != '"' {
			return errors.New("must be a string")
		}
	case kindUint:
		if !isUint(v) {
			return errors.New("must be a non-negative integer")
		}
	case kindStrings:
		if !allStrings(v) {
			return errors.New("must be an array of strings")
		}
	case kindXname:
		if v[0] != '"' || !xname.Valid(unquote(v)) {
			return errors.New("must be an xname")
		}
	case kindXnames:
		if !allStrings(v) {
			return errors.New("must be an array of xnames")
		}
		i := 0
		return eachElement(v, func(e []byte) error {
			if s := unquote(e); !xname.Valid(s) {
				return fmt.Errorf("element %d: %q is not a valid xname", i, s)
			}
			i++
			return nil
		})
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

// allStrings reports whether v is an array whose elements are all strings.
func allStrings(v []byte) bool {
	if v[0] != '[' {
		return false
	}
	ok := true
	_ = eachElement(v, func(e []byte) error {
		ok = ok && e[0] == '"'
		return nil
	})
	return ok
}

// appendProps adds the searchable values of field k: a scalar value, or each
// scalar element of an array. Objects are not indexed. Xname values are
// normalised so searches match however the client spelt them.
func appendProps(props []prop, k string, v []byte, isXname bool) []prop {
	if len(v) == 0 {
		return props
	}
	if v[0] == '[' {
		_ = eachElement(v, func(e []byte) error {
			if s, ok := scalarText(e); ok {
				props = append(props, prop{field: k, value: normIf(s, isXname)})
			}
			return nil
		})
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
func scalarText(v []byte) (string, bool) {
	if len(v) == 0 {
		return "", false
	}
	switch c := v[0]; {
	case c == '"':
		return unquote(v), true
	case c == '-' || (c >= '0' && c <= '9'), c == 't', c == 'f':
		return string(v), true
	}
	return "", false
}
