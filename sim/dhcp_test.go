package sim

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

// fakeDHCP is a DHCP server on loopback that grants 127.20.1.5 for two
// seconds (T1 one second) to every MAC and counts RENEWING requests.
type fakeDHCP struct {
	conn *net.UDPConn
	mu   sync.Mutex
	renewals,
	naks int
	nak  bool             // NAK renewals
	seen []*dhcpv4.DHCPv4 // every request, in order
}

func startFakeDHCP(t *testing.T) *fakeDHCP {
	t.Helper()
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeDHCP{conn: conn}
	t.Cleanup(func() { conn.Close() })
	go f.serve()
	return f
}

func (f *fakeDHCP) serve() {
	buf := make([]byte, 1500)
	for {
		n, from, err := f.conn.ReadFromUDP(buf)
		if err != nil {
			return
		}
		req, err := dhcpv4.FromBytes(buf[:n])
		if err != nil {
			continue
		}
		f.mu.Lock()
		f.seen = append(f.seen, req)
		f.mu.Unlock()
		typ := dhcpv4.MessageTypeOffer
		if req.MessageType() == dhcpv4.MessageTypeRequest {
			typ = dhcpv4.MessageTypeAck
			if !req.ClientIPAddr.IsUnspecified() {
				f.mu.Lock()
				f.renewals++
				if f.nak {
					typ = dhcpv4.MessageTypeNak
					f.naks++
				}
				f.mu.Unlock()
			}
		}
		rep, _ := dhcpv4.NewReplyFromRequest(req, dhcpv4.WithMessageType(typ), dhcpv4.WithYourIP(net.IPv4(127, 20, 1, 5)),
			dhcpv4.WithOption(dhcpv4.OptIPAddressLeaseTime(2*time.Second)), dhcpv4.WithServerIP(net.IPv4(127, 0, 0, 1)))
		f.conn.WriteToUDP(rep.ToBytes(), &net.UDPAddr{IP: req.GatewayIPAddr, Port: from.Port})
	}
}

func (f *fakeDHCP) counts() (renewals, naks int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.renewals, f.naks
}

// TestLeaseIsRenewed: a device renews its lease at T1 (half the lease time)
// with a RENEWING request, again after each ACK; a NAK'd renewal is tried
// again, the device keeping its address.
func TestLeaseIsRenewed(t *testing.T) {
	f := startFakeDHCP(t)
	r, err := listenRelay("127.20.0.1:0", f.conn.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	// The fake replies to giaddr at the port it was sent from: the relay's.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go r.run(ctx)
	mac := net.HardwareAddr{2, 0, 0, 0, 0, 1}
	g, err := r.lease(ctx, mac, nil)
	if err != nil {
		t.Fatal(err)
	}
	if g.ip != netip.MustParseAddr("127.20.1.5") || g.renew != time.Second {
		t.Fatalf("lease %+v, want 127.20.1.5 renewed after 1s (T1 of a 2s lease)", g)
	}
	renewed := make(chan struct{}, 8)
	go r.keep(ctx, nil, mac, g, func() { renewed <- struct{}{} })
	for range 2 {
		select {
		case <-renewed:
		case <-time.After(time.Minute): // a guard against a hang
			t.Fatal("lease not renewed")
		}
	}
	f.mu.Lock()
	f.nak = true
	f.mu.Unlock()
	if err := waitNaks(f, 2); err != nil {
		t.Fatal(err)
	}
	if n, _ := f.counts(); n < 4 {
		t.Errorf("%d renewals, want 2 ACKed and 2 NAK'd at least", n)
	}
}

// waitNaks waits until f has NAK'd n renewals (a guard against a hang).
func waitNaks(f *fakeDHCP, n int) error {
	guard := time.After(time.Minute)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, naks := f.counts(); naks >= n {
			return nil
		}
		select {
		case <-guard:
			return errNoLease
		case <-tick.C:
		}
	}
}

// TestNodeLeaseNetboots: a node's DISCOVER and REQUEST carry iPXE's
// netboot options (vendor class PXEClient, client architecture, user class
// iPXE), which tell reds it is not a BMC; a BMC's carry none of them.
func TestNodeLeaseNetboots(t *testing.T) {
	f := startFakeDHCP(t)
	r, err := listenRelay("127.20.0.1:0", f.conn.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	go r.run(t.Context())
	node, bmc := net.HardwareAddr{2, 0, 0, 0, 0, 1}, net.HardwareAddr{2, 0, 0, 0, 0, 2}
	if _, err := r.lease(t.Context(), node, nil, netboot()...); err != nil {
		t.Fatal(err)
	}
	if _, err := r.lease(t.Context(), bmc, nil); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.seen) != 4 {
		t.Fatalf("%d requests, want a DISCOVER and a REQUEST of each device", len(f.seen))
	}
	for _, req := range f.seen {
		isNode := req.ClientHWAddr.String() == node.String()
		netboots := strings.HasPrefix(req.ClassIdentifier(), "PXEClient") && len(req.ClientArch()) == 1 &&
			slices.Equal(req.UserClass(), []string{"iPXE"})
		if netboots != isNode {
			t.Errorf("%s %s: vendor class %q, arch %v, user class %q; want netboot options on the node's only",
				req.ClientHWAddr, req.MessageType(), req.ClassIdentifier(), req.ClientArch(), req.UserClass())
		}
	}
}
