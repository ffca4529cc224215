package ipxe

import (
	"net/http"
	"net/netip"
	"slices"
	"time"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/ipxe/dhcp"
)

// LeaseReader is where the API reads the DHCP server's leases from
// (*dhcp.Handler); nil when bss runs no DHCP server.
type LeaseReader interface {
	Leases() []dhcp.Lease
}

// Lease states as GET /boot/v1/dhcp/leases spells them.
const (
	LeaseOffered  = "offered"
	LeaseBound    = "bound"
	LeaseDeclined = "declined"
	LeaseExpired  = "expired" // past Expires, not yet swept by the server
)

// leaseFilter is GET /boot/v1/dhcp/leases's query, parsed once.
type leaseFilter struct {
	macs, names, states map[string]bool
	ips                 map[netip.Addr]bool
}

// parseLeaseFilter reads mac=, ip=, name= and state= (comma lists,
// repeatable); an IP or state that does not parse is a problem.ErrInvalid.
func parseLeaseFilter(r *http.Request) (leaseFilter, error) {
	q := r.URL.Query()
	set := func(name string, norm func(string) string) map[string]bool {
		m := map[string]bool{}
		for _, v := range listParam(q, name) {
			m[norm(v)] = true
		}
		return m
	}
	f := leaseFilter{macs: set("mac", normMAC), names: set("name", func(s string) string { return s }),
		states: set("state", func(s string) string { return s }), ips: map[netip.Addr]bool{}}
	for _, v := range listParam(q, "ip") {
		a, err := netip.ParseAddr(v)
		if err != nil {
			return f, problem.Invalidf("Bad Request - Invalid ip '%s'", v)
		}
		f.ips[a] = true
	}
	for s := range f.states {
		if !slices.Contains([]string{LeaseOffered, LeaseBound, LeaseDeclined, LeaseExpired}, s) {
			return f, problem.Invalidf("Bad Request - Invalid state '%s'", s)
		}
	}
	return f, nil
}

// match reports whether l passes every filter given; a name matches the
// lease's node (ComponentID) or the host name the client sent.
func (f leaseFilter) match(l DHCPLease) bool {
	return (len(f.macs) == 0 || f.macs[l.MACAddress]) &&
		(len(f.ips) == 0 || f.ips[netip.MustParseAddr(l.IPAddress)]) &&
		(len(f.states) == 0 || f.states[l.State]) &&
		(len(f.names) == 0 || f.names[l.ComponentID] || f.names[l.Hostname])
}

// dhcpLeases answers GET /boot/v1/dhcp/leases (an extension: hms-bss runs
// no DHCP server; in CSM the leases are Kea's). 404 without a DHCP server.
func (a *API) dhcpLeases(w http.ResponseWriter, r *http.Request) {
	if a.leases == nil {
		a.fail(w, r, problem.NotFoundf("Not Found - bss runs no DHCP server (-dhcp-interface or -dhcp-listen)"))
		return
	}
	f, err := parseLeaseFilter(r)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	now := a.svc.now()
	out := []DHCPLease{}
	for _, l := range a.leases.Leases() {
		dl := wireLease(l, now)
		if n, ok := a.svc.cache.ByMAC(dl.MACAddress); ok && dl.MACAddress != "" {
			dl.ComponentID = n.ID
		}
		if f.match(dl) {
			out = append(out, dl)
		}
	}
	slices.SortFunc(out, func(x, y DHCPLease) int {
		return netip.MustParseAddr(x.IPAddress).Compare(netip.MustParseAddr(y.IPAddress))
	})
	writeJSON(w, http.StatusOK, jsonType, out)
}

// wireLease is l as the API shows it at now.
func wireLease(l dhcp.Lease, now time.Time) DHCPLease {
	st := LeaseOffered
	switch {
	case !now.Before(l.Expires):
		st = LeaseExpired
	case l.State == dhcp.Bound:
		st = LeaseBound
	case l.State == dhcp.Declined:
		st = LeaseDeclined
	}
	dl := DHCPLease{MACAddress: l.MAC, IPAddress: l.IP.String(), Subnet: l.Subnet.String(), State: st,
		Expires: l.Expires.UTC(), Hostname: l.Hostname, Known: l.Known}
	if !l.Updated.IsZero() {
		dl.LastExchange = l.Updated.UTC()
	}
	if l.Relay.IsValid() {
		dl.Relay = l.Relay.String()
	}
	return dl
}
