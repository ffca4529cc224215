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

// lease runs DISCOVER/OFFER/REQUEST/ACK for mac and returns the address.
// onOffer, if not nil, is called with the offered address before the
// REQUEST (a BMC binds it, so it answers once the lease is known).
func (r *relay) lease(ctx context.Context, mac net.HardwareAddr, onOffer func(netip.Addr) error) (netip.Addr, error) {
	disc, err := dhcpv4.NewDiscovery(mac, dhcpv4.WithRelay(r.giaddr))
	if err != nil {
		return netip.Addr{}, err
	}
	offer, err := r.exchange(ctx, disc, dhcpv4.MessageTypeOffer)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("%s discover: %w", mac, err)
	}
	if onOffer != nil {
		ip, _ := netip.AddrFromSlice(offer.YourIPAddr.To4())
		if err := onOffer(ip); err != nil {
			return netip.Addr{}, fmt.Errorf("%s offered %s: %w", mac, ip, err)
		}
	}
	req, err := dhcpv4.NewRequestFromOffer(offer, dhcpv4.WithRelay(r.giaddr))
	if err != nil {
		return netip.Addr{}, err
	}
	ack, err := r.exchange(ctx, req, dhcpv4.MessageTypeAck)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("%s request: %w", mac, err)
	}
	ip, ok := netip.AddrFromSlice(ack.YourIPAddr.To4())
	if !ok {
		return netip.Addr{}, fmt.Errorf("%s: ACK without an address", mac)
	}
	return ip, nil
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
