package inventory

import (
	"net"
	"net/url"
	"strings"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/redfish"
)

// normEndpoint validates ep (field is the name used in errors) and fills the
// defaults: Type from the xname, Enabled true, FQDN from Hostname and Domain
// (or the xname when no address at all is given).
func normEndpoint(field string, ep *hsm.RedfishEndpoint) error {
	t := xname.TypeOf(ep.ID)
	if t == xname.TypeInvalid || !xname.IsController(t) {
		return problem.Invalidf("%sID: %q is not the xname of a Redfish controller", field, ep.ID)
	}
	ep.ID = xname.Normalize(ep.ID)
	if ep.Type != "" {
		if pt, ok := xname.ParseType(ep.Type); !ok || pt != t {
			return problem.Invalidf("%sType: %q does not match the type of %s (%s)", field, ep.Type, ep.ID, t)
		}
	}
	ep.Type = string(t)
	if ep.Enabled == nil {
		on := true
		ep.Enabled = &on
	}
	if ep.MACAddr != "" {
		hw, err := net.ParseMAC(strings.TrimSpace(ep.MACAddr))
		if err != nil {
			return problem.Invalidf("%sMACAddr: %q is not a MAC address", field, ep.MACAddr)
		}
		ep.MACAddr = hw.String()
	}
	if ep.IPAddress != "" && !validHostPort(ep.IPAddress, true) {
		return problem.Invalidf("%sIPAddress: %q is not an IP address (optionally with :port)", field, ep.IPAddress)
	}
	if ep.FQDN == "" && ep.Hostname != "" {
		ep.FQDN = ep.Hostname
		if ep.Domain != "" {
			ep.FQDN += "." + ep.Domain
		}
	}
	if ep.FQDN == "" && ep.IPAddress == "" {
		ep.FQDN = ep.ID
	}
	if ep.FQDN != "" && !validHostPort(ep.FQDN, false) {
		return problem.Invalidf("%sFQDN: %q is not a host name (optionally with :port)", field, ep.FQDN)
	}
	if err := checkHostDomain(field, ep); err != nil {
		return err
	}
	if h := hostOnly(ep.FQDN); ep.Hostname == "" && h != "" && net.ParseIP(h) == nil {
		ep.Hostname, _, _ = strings.Cut(h, ".")
	}
	if ep.Hostname == "" {
		ep.Hostname = ep.ID
	}
	if ep.DiscoveryInfo.LastDiscoveryStatus == "" {
		ep.DiscoveryInfo.LastDiscoveryStatus = string(redfish.StatusNotYetQueried)
	}
	return nil
}

// checkHostDomain refuses a Hostname (and Domain) that name another host
// than the FQDN, with the shipped HSM's words.
func checkHostDomain(field string, ep *hsm.RedfishEndpoint) error {
	host := hostOnly(ep.FQDN)
	if ep.Hostname == "" || host == "" || net.ParseIP(host) != nil {
		return nil
	}
	hd, want := ep.Hostname, host
	if ep.Domain != "" {
		hd += "." + ep.Domain
	} else if !strings.EqualFold(hd, host) {
		want, _, _ = strings.Cut(host, ".")
	}
	if !strings.EqualFold(hd, want) {
		return problem.Invalidf("%shost/domain conflicts with FQDN: '%s' != '%s'", field, hd, host)
	}
	return nil
}

// hostOnly strips a :port from h.
func hostOnly(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		return host
	}
	return h
}

// validHostPort accepts a host name or IP address with an optional :port
// (an IPv6 literal with a port goes in brackets). ipOnly demands an IP.
func validHostPort(s string, ipOnly bool) bool {
	host := s
	if h, p, err := net.SplitHostPort(s); err == nil {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return false
		}
		host = h
	}
	if net.ParseIP(host) != nil {
		return true
	}
	if ipOnly || host == "" || len(host) > 253 {
		return false
	}
	u, err := url.Parse("https://" + host + "/")
	return err == nil && u.Hostname() == host && !strings.ContainsAny(host, " /?#@")
}

// redfishEndpointFilter selects endpoints; each list is OR'd, lists are AND'd.
type redfishEndpointFilter struct {
	ID, FQDN, Type, UUID, MACAddr, IPAddress, LastStatus []string
	ignored                                              []string // unknown parameters, ignored as shipped HSM does
}

// parseRedfishEndpointFilter parses the GET /Inventory/RedfishEndpoints query.
func parseRedfishEndpointFilter(q url.Values) (redfishEndpointFilter, error) {
	var f redfishEndpointFilter
	for k, vs := range q {
		switch strings.ToLower(k) {
		case "id":
			for _, v := range vs {
				if !xname.Valid(v) {
					return f, problem.Invalidf("bad query param: Argument was not a valid xname ID")
				}
				f.ID = append(f.ID, xname.Normalize(v))
			}
		case "fqdn":
			f.FQDN = append(f.FQDN, vs...)
		case "type":
			for _, v := range vs {
				t, ok := xname.ParseType(v)
				if !ok {
					return f, problem.Invalidf("query parameter type: invalid value %q", v)
				}
				f.Type = append(f.Type, string(t))
			}
		case "uuid":
			f.UUID = append(f.UUID, vs...)
		case "macaddr":
			for _, v := range vs {
				f.MACAddr = append(f.MACAddr, strings.ToLower(v))
			}
		case "ipaddress":
			f.IPAddress = append(f.IPAddress, vs...)
		case "laststatus":
			f.LastStatus = append(f.LastStatus, vs...)
		default:
			f.ignored = append(f.ignored, k)
		}
	}
	return f, nil
}
