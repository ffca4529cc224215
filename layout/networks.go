package layout

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/netip"
	"strings"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
)

// parseNetworkType returns the canonical (lower-case) spelling of a network type.
func parseNetworkType(s string) (string, error) {
	for _, t := range []string{"slingshot10", "slingshot11", "cassini", "ethernet", "opa", "infiniband", "mixed"} {
		if strings.EqualFold(s, t) {
			return t, nil
		}
	}
	return "", mark(problem.Invalidf("Type %q: must be one of slingshot10, slingshot11, cassini, ethernet, opa, infiniband, mixed", s), failNetType, s)
}

// checkNetwork validates n, whose name must be path when path is not empty,
// and returns it in canonical form with the derived fields cleared.
func checkNetwork(n Network, path string) (Network, error) {
	if n.Name == "" {
		n.Name = path
	}
	switch {
	case path != "" && n.Name != path:
		return n, problem.Invalidf("Name %q in the body does not match %q in the path", n.Name, path)
	case n.Name == "":
		return n, mark(problem.Invalidf("Name: missing"), failNetName, "")
	case httpserver.CheckText("Name", n.Name) != nil:
		return n, httpserver.CheckText("Name", n.Name)
	case strings.ContainsAny(n.Name, " \t\r\n/?#%"):
		return n, mark(problem.Invalidf("Name %q: must not contain spaces, '/', '?', '#' or '%%'", n.Name), failNetName, n.Name)
	}
	t, err := parseNetworkType(n.Type)
	if err != nil {
		return n, err
	}
	n.Type = t
	if n.IPRanges == nil {
		n.IPRanges = []string{}
	}
	for i, r := range n.IPRanges {
		if _, err := netip.ParsePrefix(r); err != nil {
			return n, mark(problem.Invalidf("IPRanges[%d]: %q is not an address range in CIDR form", i, r), failNetRange, r)
		}
	}
	n.LastUpdated, n.LastUpdatedTime = 0, ""
	extra := bytes.TrimSpace(n.ExtraProperties)
	if len(extra) == 0 || string(extra) == "null" {
		n.ExtraProperties = nil
		return n, nil
	}
	if extra[0] != '{' {
		return n, problem.Invalidf("ExtraProperties: must be a JSON object")
	}
	var p NetworkProps
	if err := json.Unmarshal(extra, &p); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			return n, problem.Invalidf("ExtraProperties.%s: expected %s, got JSON %s", ute.Field, ute.Type, ute.Value)
		}
		return n, problem.Invalidf("ExtraProperties: malformed JSON object")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, extra); err != nil {
		return n, problem.Invalidf("ExtraProperties: malformed JSON object")
	}
	n.ExtraProperties = buf.Bytes()
	return n, nil
}

// matches reports whether n satisfies every criterion of q.
func (q NetworkQuery) matches(n Network) bool {
	switch {
	case q.Name != "" && n.Name != q.Name,
		q.FullName != "" && n.FullName != q.FullName,
		q.Type != "" && n.Type != q.Type:
		return false
	}
	if q.IPAddress.IsValid() && !networkContains(n, q.IPAddress) {
		return false
	}
	if len(q.Props) == 0 {
		return true
	}
	for _, pm := range q.Props {
		found := false
		_ = eachMember(n.ExtraProperties, func(k, v []byte) error {
			if unquote(k) == pm.Fields[0] {
				for _, p := range appendProps(nil, pm.Fields[0], v, false) {
					found = found || p.value == pm.Value
				}
			}
			return nil
		})
		if !found {
			return false
		}
	}
	return true
}

// networkContains reports whether ip falls in one of n's IPRanges or its CIDR.
func networkContains(n Network, ip netip.Addr) bool {
	ranges := n.IPRanges
	if p, err := n.Props(); err == nil && p.CIDR != "" {
		ranges = append(ranges[:len(ranges):len(ranges)], p.CIDR)
	}
	for _, r := range ranges {
		if pfx, err := netip.ParsePrefix(r); err == nil && pfx.Contains(ip) {
			return true
		}
	}
	return false
}

// mergePatch applies an RFC 7396 JSON merge patch to target.
func mergePatch(target, patch any) any {
	pm, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	tm, ok := target.(map[string]any)
	if !ok {
		tm = map[string]any{}
	}
	for k, v := range pm {
		if v == nil {
			delete(tm, k)
		} else {
			tm[k] = mergePatch(tm[k], v)
		}
	}
	return tm
}
