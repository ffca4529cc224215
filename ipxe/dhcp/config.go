package dhcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"time"
)

// SubnetSpec is a subnet as written in flags or in a -dhcp-config file.
type SubnetSpec struct {
	Subnet       string   `json:"subnet"`        // CIDR
	Range        string   `json:"range"`         // FIRST-LAST; default the whole subnet but its network, broadcast and router
	Router       string   `json:"router"`        // optional
	DNS          []string `json:"dns"`           // optional
	Lease        string   `json:"lease"`         // Go duration; default 1h
	UnknownLease string   `json:"unknown-lease"` // Go duration; default min(5m, lease)
	Relayed      bool     `json:"relayed"`       // reached only through relays
}

// File is the -dhcp-config file: {"subnets": [SubnetSpec...]}.
type File struct {
	Subnets []SubnetSpec `json:"subnets"`
}

// LoadFile reads and checks a -dhcp-config file.
func LoadFile(path string) ([]Subnet, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("dhcp config: %w", err)
	}
	var f File
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("dhcp config %s: %w", path, err)
	}
	var out []Subnet
	for i, sp := range f.Subnets {
		s, err := sp.Parse()
		if err != nil {
			return nil, fmt.Errorf("dhcp config %s: subnet %d: %w", path, i+1, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// Parse checks the spec and returns the subnet.
func (sp SubnetSpec) Parse() (Subnet, error) {
	var s Subnet
	p, err := netip.ParsePrefix(sp.Subnet)
	if err != nil || !p.Addr().Is4() {
		return s, fmt.Errorf("subnet %q: not an IPv4 CIDR", sp.Subnet)
	}
	s.Prefix, s.Relayed = p.Masked(), sp.Relayed
	if sp.Router != "" {
		if s.Router, err = parse4(sp.Router); err != nil || !s.Prefix.Contains(s.Router) {
			return s, fmt.Errorf("router %q: not an address in %s", sp.Router, s.Prefix)
		}
	}
	for _, d := range sp.DNS {
		a, err := parse4(d)
		if err != nil {
			return s, fmt.Errorf("dns %q: %w", d, err)
		}
		s.DNS = append(s.DNS, a)
	}
	if s.First, s.Last, err = parseRange(sp.Range, s.Prefix, s.Router); err != nil {
		return s, err
	}
	if s.Lease, err = parseDuration("lease", sp.Lease); err != nil {
		return s, err
	}
	if s.UnknownLease, err = parseDuration("unknown-lease", sp.UnknownLease); err != nil {
		return s, err
	}
	return s, nil
}

func parse4(s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil || !a.Is4() {
		return netip.Addr{}, fmt.Errorf("%q is not an IPv4 address", s)
	}
	return a, nil
}

func parseDuration(name, s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < time.Minute {
		return 0, fmt.Errorf("%s %q: want a duration of at least 1m", name, s)
	}
	return d, nil
}

// parseRange parses FIRST-LAST inside p; empty: p without its network and
// broadcast addresses, starting after the router when it is the first.
func parseRange(r string, p netip.Prefix, router netip.Addr) (first, last netip.Addr, err error) {
	if r == "" {
		if p.Bits() > 30 {
			return first, last, fmt.Errorf("subnet %s: too small for a pool", p)
		}
		first, last = p.Addr().Next(), lastAddr(p).Prev()
		if first == router {
			first = first.Next()
		}
		return first, last, nil
	}
	a, b, ok := strings.Cut(r, "-")
	if !ok {
		return first, last, fmt.Errorf("range %q: want FIRST-LAST", r)
	}
	if first, err = parse4(a); err != nil {
		return first, last, fmt.Errorf("range %q: %w", r, err)
	}
	if last, err = parse4(b); err != nil {
		return first, last, fmt.Errorf("range %q: %w", r, err)
	}
	if !p.Contains(first) || !p.Contains(last) || first.Compare(last) > 0 {
		return first, last, fmt.Errorf("range %q: not an ascending range inside %s", r, p)
	}
	return first, last, nil
}

func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().As4()
	host := uint32(1)<<(32-p.Bits()) - 1
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]) | host
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// CheckSubnets refuses overlapping subnets and more than one that is not
// relayed (the server's own link); proxy mode needs none.
func CheckSubnets(subs []Subnet, proxy bool) error {
	if len(subs) == 0 && !proxy {
		return errors.New("no subnet: give -dhcp-subnet or -dhcp-config (or -dhcp-proxy)")
	}
	local := 0
	for i, s := range subs {
		if !s.Relayed {
			local++
		}
		for _, o := range subs[:i] {
			if s.Prefix.Overlaps(o.Prefix) {
				return fmt.Errorf("subnets %s and %s overlap", o.Prefix, s.Prefix)
			}
		}
	}
	if local > 1 {
		return errors.New("more than one subnet is not relayed: mark the others \"relayed\": true")
	}
	return nil
}
