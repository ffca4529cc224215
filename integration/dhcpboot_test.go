package integration

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

// nodeRelay is the giaddr of the relay that the nodes of the apply file
// boot behind: their management addresses (127.31.0.x) are on its subnet,
// which the suite's DHCP configuration declares.
const nodeRelay = "127.31.0.1"

// dhcpBoot boots mac as iPXE does behind a relay: DISCOVER/OFFER/
// REQUEST/ACK with user class "iPXE" relayed from nodeRelay to bss's DHCP
// server, then a GET of the boot file the ACK names, with iPXE's
// ${net0/mac} filled in. It returns the leased address and the script.
func dhcpBoot(ctx context.Context, s *suite, mac string) (netip.Addr, string, error) {
	hw, err := net.ParseMAC(mac)
	if err != nil {
		return netip.Addr{}, "", err
	}
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.ParseIP(nodeRelay), Port: s.relay})
	if err != nil {
		return netip.Addr{}, "", fmt.Errorf("relay: %w", err)
	}
	defer conn.Close()
	server := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: s.dhcp}
	relay := dhcpv4.WithRelay(net.ParseIP(nodeRelay))
	disc, err := dhcpv4.NewDiscovery(hw, relay, dhcpv4.WithUserClass("iPXE", false))
	if err != nil {
		return netip.Addr{}, "", err
	}
	offer, err := relayed(conn, server, disc, dhcpv4.MessageTypeOffer)
	if err != nil {
		return netip.Addr{}, "", fmt.Errorf("discover: %w", err)
	}
	req, err := dhcpv4.NewRequestFromOffer(offer, relay, dhcpv4.WithUserClass("iPXE", false))
	if err != nil {
		return netip.Addr{}, "", err
	}
	ack, err := relayed(conn, server, req, dhcpv4.MessageTypeAck)
	if err != nil {
		return netip.Addr{}, "", fmt.Errorf("request: %w", err)
	}
	ip, _ := netip.AddrFromSlice(ack.YourIPAddr.To4())
	file := ack.BootFileNameOption()
	if file == "" {
		file = ack.BootFileName
	}
	if !strings.HasPrefix(file, "http://") {
		return ip, "", fmt.Errorf("ACK for %s names boot file %q, want bss's boot script URL", ip, file)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.ReplaceAll(file, "${net0/mac}", mac), nil)
	if err != nil {
		return ip, "", err
	}
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		return ip, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return ip, "", fmt.Errorf("GET %s: %s %s", file, resp.Status, b)
	}
	return ip, string(b), err
}

// relayed sends m to the server as a relay and returns the reply of type
// want to m's transaction (2 s at most).
func relayed(conn *net.UDPConn, server *net.UDPAddr, m *dhcpv4.DHCPv4, want dhcpv4.MessageType) (*dhcpv4.DHCPv4, error) {
	if _, err := conn.WriteToUDP(m.ToBytes(), server); err != nil {
		return nil, err
	}
	if err := conn.SetReadDeadline(time.Now().Add(2 * time.Second)); err != nil {
		return nil, err
	}
	buf := make([]byte, 1500)
	for {
		n, _, err := conn.ReadFromUDP(buf)
		if err != nil {
			return nil, err
		}
		r, err := dhcpv4.FromBytes(buf[:n])
		if err != nil || r.TransactionID != m.TransactionID {
			continue
		}
		if r.MessageType() != want {
			return nil, fmt.Errorf("%s, want %s", r.MessageType(), want)
		}
		return r, nil
	}
}
