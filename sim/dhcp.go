package sim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"
)

// relay is the simulated network's DHCP relay: every simulated device's
// DISCOVER and REQUEST leave from the relay's address (giaddr) as unicast
// to the suite's DHCP server, and the server's replies come back to it, so
// neither root nor a network namespace is needed. Replies are matched to
// their device by transaction ID.
type relay struct {
	conn    *net.UDPConn
	giaddr  net.IP
	server  *net.UDPAddr
	timeout time.Duration

	mu      sync.Mutex
	waiters map[dhcpv4.TransactionID]chan *dhcpv4.DHCPv4
}

// listenRelay binds the relay at addr (giaddr:port; the DHCP server must be
// told the port with -dhcp-relay-port).
func listenRelay(addr, server string) (*relay, error) {
	la, err := net.ResolveUDPAddr("udp4", addr)
	if err != nil {
		return nil, fmt.Errorf("relay address %s: %w", addr, err)
	}
	sa, err := net.ResolveUDPAddr("udp4", server)
	if err != nil {
		return nil, fmt.Errorf("dhcp server %s: %w", server, err)
	}
	conn, err := net.ListenUDP("udp4", la)
	if err != nil {
		return nil, fmt.Errorf("relay listen on %s: %w", addr, err)
	}
	return &relay{conn: conn, giaddr: la.IP.To4(), server: sa, timeout: 2 * time.Second,
		waiters: map[dhcpv4.TransactionID]chan *dhcpv4.DHCPv4{}}, nil
}

// run hands each reply to the device waiting for its transaction until ctx
// ends; it closes the socket.
func (r *relay) run(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { r.conn.Close() })
	defer stop()
	buf := make([]byte, 1500)
	for {
		n, _, err := r.conn.ReadFromUDP(buf)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("relay read: %w", err)
		}
		m, err := dhcpv4.FromBytes(buf[:n])
		if err != nil {
			continue // not DHCP: nothing on loopback should send it, drop it
		}
		r.mu.Lock()
		ch := r.waiters[m.TransactionID]
		r.mu.Unlock()
		if ch != nil {
			select {
			case ch <- m:
			default:
			}
		}
	}
}

// errNoLease is a device that got no lease after its retries.
var errNoLease = errors.New("no DHCP lease")

// A grant is an address a device holds and when to renew it (T1).
type grant struct {
	ip    netip.Addr
	renew time.Duration
}

// renewAt is the ACK's renewal time T1: option 58, else half its lease
// time, else an hour.
func renewAt(ack *dhcpv4.DHCPv4) time.Duration {
	if t := ack.IPAddressRenewalTime(0); t > 0 {
		return t
	}
	if t := ack.IPAddressLeaseTime(0); t > 0 {
		return t / 2
	}
	return time.Hour
}

// lease runs DISCOVER/OFFER/REQUEST/ACK for mac and returns the address.
// onOffer, if not nil, is called with the offered address before the
// REQUEST (a BMC binds it, so it answers once the lease is known); opts
// go on the DISCOVER and the REQUEST (a node's netboot options).
func (r *relay) lease(ctx context.Context, mac net.HardwareAddr, onOffer func(netip.Addr) error, opts ...dhcpv4.Modifier) (grant, error) {
	disc, err := dhcpv4.NewDiscovery(mac, append([]dhcpv4.Modifier{dhcpv4.WithRelay(r.giaddr)}, opts...)...)
	if err != nil {
		return grant{}, err
	}
	offer, err := r.exchange(ctx, disc, dhcpv4.MessageTypeOffer)
	if err != nil {
		return grant{}, fmt.Errorf("%s discover: %w", mac, err)
	}
	if onOffer != nil {
		ip, _ := netip.AddrFromSlice(offer.YourIPAddr.To4())
		if err := onOffer(ip); err != nil {
			return grant{}, fmt.Errorf("%s offered %s: %w", mac, ip, err)
		}
	}
	req, err := dhcpv4.NewRequestFromOffer(offer, append([]dhcpv4.Modifier{dhcpv4.WithRelay(r.giaddr)}, opts...)...)
	if err != nil {
		return grant{}, err
	}
	ack, err := r.exchange(ctx, req, dhcpv4.MessageTypeAck)
	if err != nil {
		return grant{}, fmt.Errorf("%s request: %w", mac, err)
	}
	ip, ok := netip.AddrFromSlice(ack.YourIPAddr.To4())
	if !ok {
		return grant{}, fmt.Errorf("%s: ACK without an address", mac)
	}
	return grant{ip: ip, renew: renewAt(ack)}, nil
}

// netboot is the options of a node's DHCP requests: iPXE's on x86-64
// UEFI (vendor class PXEClient, client architecture 7, user class iPXE),
// as a node booting from the network sends them. They are what tells a
// node's NIC from a BMC: reds leaves a network-booting client's lease to
// HSM (docs/discovery.md, "Nodes' NICs") instead of looking for it on the
// switches, where it is not.
func netboot() []dhcpv4.Modifier {
	return []dhcpv4.Modifier{
		dhcpv4.WithOption(dhcpv4.OptClassIdentifier("PXEClient:Arch:00007:UNDI:003016")),
		dhcpv4.WithOption(dhcpv4.OptClientArch(iana.EFI_X86_64)),
		dhcpv4.WithUserClass("iPXE", false),
	}
}

// renew runs a RENEWING exchange (REQUEST with ciaddr, RFC 2131 4.3.2) for
// g and returns the grant the ACK gives. A renewing client unicasts to the
// server from its own address; the sim's devices cannot listen on port 68
// without root, so the request goes through the relay like the others (bss
// answers a REQUEST with ciaddr the same either way).
func (r *relay) renew(ctx context.Context, mac net.HardwareAddr, g grant) (grant, error) {
	req, err := dhcpv4.New(dhcpv4.WithHwAddr(mac), dhcpv4.WithMessageType(dhcpv4.MessageTypeRequest),
		dhcpv4.WithClientIP(g.ip.AsSlice()), dhcpv4.WithRelay(r.giaddr))
	if err != nil {
		return g, err
	}
	ack, err := r.exchange(ctx, req, dhcpv4.MessageTypeAck)
	if err != nil {
		return g, fmt.Errorf("%s renew %s: %w", mac, g.ip, err)
	}
	if ip, ok := netip.AddrFromSlice(ack.YourIPAddr.To4()); ok && !ip.IsUnspecified() && ip != g.ip {
		return g, fmt.Errorf("%s renew %s: ACK for %s", mac, g.ip, ip)
	}
	return grant{ip: g.ip, renew: renewAt(ack)}, nil
}

// keep renews g at each T1 until ctx ends or stop is closed; renewed is
// called after each ACK. A failed renewal (no answer, NAK) is tried again
// after a tenth of T1 (at least a second): the device keeps its address,
// as the sim never moves a running device.
func (r *relay) keep(ctx context.Context, stop <-chan struct{}, mac net.HardwareAddr, g grant, renewed func()) {
	wait := g.renew
	for {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-stop:
			t.Stop()
			return
		case <-t.C:
		}
		ng, err := r.renew(ctx, mac, g)
		if err != nil {
			wait = max(g.renew/10, time.Second)
			continue
		}
		g, wait = ng, ng.renew
		if renewed != nil {
			renewed()
		}
	}
}

// exchange sends m (resent up to 3 times, as a client does) and waits for a
// reply of type want; a NAK ends it at once.
func (r *relay) exchange(ctx context.Context, m *dhcpv4.DHCPv4, want dhcpv4.MessageType) (*dhcpv4.DHCPv4, error) {
	ch := make(chan *dhcpv4.DHCPv4, 4)
	r.mu.Lock()
	r.waiters[m.TransactionID] = ch
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.waiters, m.TransactionID)
		r.mu.Unlock()
	}()
	for try := 0; try < 4; try++ {
		if _, err := r.conn.WriteToUDP(m.ToBytes(), r.server); err != nil {
			return nil, fmt.Errorf("send: %w", err)
		}
		t := time.NewTimer(r.timeout)
		for wait := true; wait; {
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, ctx.Err()
			case <-t.C:
				wait = false
			case rep := <-ch:
				switch rep.MessageType() {
				case want:
					t.Stop()
					return rep, nil
				case dhcpv4.MessageTypeNak:
					t.Stop()
					return nil, fmt.Errorf("NAK: %s", rep.Message())
				}
			}
		}
	}
	return nil, errNoLease
}
