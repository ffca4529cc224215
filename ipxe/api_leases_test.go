package ipxe

import (
	"errors"
	"net"
	"net/netip"
	"testing"

	bssclient "github.com/hmsuite/hms/ipxe/client"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/insomniacslk/dhcp/dhcpv4"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/ipxe/dhcp"
)

// TestDHCPLeases reads the leases of a real DHCP server (loopback) through
// GET /boot/v1/dhcp/leases and the client, with each filter.
func TestDHCPLeases(t *testing.T) {
	sub := dhcp.Subnet{Prefix: netip.MustParsePrefix("10.0.0.0/24"), First: netip.MustParseAddr("10.0.0.100"),
		Last: netip.MustParseAddr("10.0.0.200")}
	_, bss := withHSM(t, func(c *DaemonConfig) {
		c.DHCP = &dhcp.ServerConfig{Listen: &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, ReplyToPeer: true,
			Handler: dhcp.Config{Subnets: []dhcp.Subnet{sub}, ServerID: netip.MustParseAddr("10.0.0.1")}}
	})
	addr := bss.DHCP().Addr()
	dora(t, addr, "aa:bb:cc:00:00:01") // x3000c0s1b0n0, 10.0.0.1 in HSM (withHSM)
	dora(t, addr, "02:00:00:00:98:01")
	dora(t, addr, "02:00:00:00:98:02")
	askDHCP(t, addr, dhcpv4.MessageTypeDiscover, "02:00:00:00:98:03")
	known := DHCPLease{MACAddress: "aa:bb:cc:00:00:01", IPAddress: "10.0.0.1", Subnet: "10.0.0.0/24", State: LeaseBound,
		ComponentID: "x3000c0s1b0n0", Known: true}
	first := DHCPLease{MACAddress: "02:00:00:00:98:01", IPAddress: "10.0.0.100", Subnet: "10.0.0.0/24", State: LeaseBound}
	second := DHCPLease{MACAddress: "02:00:00:00:98:02", IPAddress: "10.0.0.101", Subnet: "10.0.0.0/24", State: LeaseBound}
	offered := DHCPLease{MACAddress: "02:00:00:00:98:03", IPAddress: "10.0.0.102", Subnet: "10.0.0.0/24", State: LeaseOffered}
	c := bssclient.New(bss.URL(), nil)
	for _, tc := range []struct {
		name string
		q    LeaseQuery
		want []DHCPLease
	}{
		{name: "all, by address", want: []DHCPLease{known, first, second, offered}},
		{name: "mac, any spelling", q: LeaseQuery{MACs: []string{"020000009802", "02-00-00-00-98-01"}}, want: []DHCPLease{first, second}},
		{name: "ip", q: LeaseQuery{IPs: []string{"10.0.0.100"}}, want: []DHCPLease{first}},
		{name: "name", q: LeaseQuery{Names: []string{"x3000c0s1b0n0"}}, want: []DHCPLease{known}},
		{name: "state", q: LeaseQuery{States: []string{LeaseOffered}}, want: []DHCPLease{offered}},
		{name: "filters together", q: LeaseQuery{MACs: []string{"02:00:00:00:98:01"}, States: []string{LeaseOffered}}, want: []DHCPLease{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := c.Leases(t.Context(), tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(DHCPLease{}, "Expires", "LastExchange")); d != "" {
				t.Errorf("leases (-want +got):\n%s", d)
			}
			for _, l := range got {
				if l.Expires.IsZero() || l.LastExchange.IsZero() {
					t.Errorf("%s: no expiry or last exchange: %+v", l.IPAddress, l)
				}
			}
		})
	}
	for _, q := range []LeaseQuery{{IPs: []string{"10.0.0"}}, {States: []string{"leased"}}} {
		if _, err := c.Leases(t.Context(), q); !errors.Is(err, problem.ErrInvalid) {
			t.Errorf("%+v: %v, want invalid", q, err)
		}
	}
}

func TestDHCPLeasesWithoutServer(t *testing.T) {
	h := newHarness(t)
	if _, err := bssclient.New(h.srv.URL, nil).Leases(t.Context(), LeaseQuery{}); !errors.Is(err, problem.ErrNotFound) {
		t.Errorf("leases of a bss without DHCP: %v, want not found", err)
	}
}
