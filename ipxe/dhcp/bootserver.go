package dhcp

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/server4"
)

// BootServerPort is the PXE boot server's port (PXE 2.1, section 2.2.6;
// dnsmasq's proxy mode answers it too).
//
// A ProxyDHCP offer carries option 60 "PXEClient" and no option 43; UEFI
// firmware built on EDK2 (OVMF and most servers') takes such an offer for
// a "BINL" one and, before it uses any boot file, asks the proxy again
// with a DHCPREQUEST unicast to siaddr port 4011. iPXE does the same for
// its ProxyDHCPREQUEST. Without an answer on 4011 neither boots.
const BootServerPort = 4011

// listenBootServer binds the PXE boot server socket of a proxy-mode server.
func listenBootServer(cfg ServerConfig) (*net.UDPConn, error) {
	if !cfg.Handler.Proxy || cfg.BootServer == nil {
		return nil, nil
	}
	c, err := server4.NewIPv4UDPConn(cfg.Interface, cfg.BootServer)
	if err != nil {
		return nil, fmt.Errorf("dhcp boot server listen on %s %s: %w", cfg.Interface, cfg.BootServer, err)
	}
	return c, nil
}

// serveBootServer answers boot server requests until the socket closes:
// a REQUEST or INFORM from a PXE client gets the proxy ACK (its boot file,
// siaddr and option 60), sent back to the address and port it came from
// (broadcast to that port when the client has no address yet). The
// traffic is one packet per booting client, so this is a plain loop.
func (s *Server) serveBootServer(ctx context.Context) error {
	buf := make([]byte, maxDatagram)
	for {
		n, peer, err := s.boot.ReadFromUDP(buf)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return fmt.Errorf("dhcp boot server read: %w", err)
		}
		if r := s.bootServerReply(buf[:n], peer); r != nil {
			if _, err := s.boot.WriteToUDP(r.b, r.dst); err != nil {
				s.m.sendErrors.Inc()
				s.cfg.Log.Debug("dhcp_send_failed", "to", r.dst.String(), "err", err)
				continue
			}
			s.m.reply(r.t).Inc()
		}
	}
}

// bootServerReply decides one boot server packet (nil: dropped).
func (s *Server) bootServerReply(b []byte, peer *net.UDPAddr) *datagram {
	m, err := parse(b)
	if err != nil {
		s.drop(DropMalformed, "from", peer.String(), "err", err)
		return nil
	}
	t := m.MessageType()
	s.m.packet(t).Inc()
	if t != dhcpv4.MessageTypeRequest && t != dhcpv4.MessageTypeInform {
		s.drop(DropUnknownType, "mac", m.ClientHWAddr.String(), "type", t.String(), "port", BootServerPort)
		return nil
	}
	res := s.h.HandleBootServer(m)
	if res.Drop != "" {
		s.drop(res.Drop, "mac", m.ClientHWAddr.String(), "type", t.String(), "port", BootServerPort)
		return nil
	}
	// PXE 2.1: the boot server echoes the boot item the client asked for
	// (option 43, sub-option 71), so the client knows which reply is which.
	if item := bootItem(m); item != nil {
		res.Reply.UpdateOption(dhcpv4.OptGeneric(dhcpv4.OptionVendorSpecificInformation, append([]byte{71, byte(len(item))}, append(item, 255)...)))
	}
	dst := peer
	if peer.IP.IsUnspecified() {
		dst = &net.UDPAddr{IP: net.IPv4bcast, Port: peer.Port}
	}
	return &datagram{b: encode(res.Reply, maxMessageOf(m)), dst: dst, t: res.Reply.MessageType()}
}

// maxMessageOf is request.maxMessage of a message insomniacslk parsed.
func maxMessageOf(req *dhcpv4.DHCPv4) int {
	if m, err := req.MaxMessageSize(); err == nil {
		return max(minMessage, int(m)-28)
	}
	return minMessage
}

// bootItem is sub-option 71 (PXE_BOOT_ITEM) of req's option 43, nil when
// absent.
func bootItem(req *dhcpv4.DHCPv4) []byte {
	o := req.Options.Get(dhcpv4.OptionVendorSpecificInformation)
	for len(o) >= 2 {
		code, n := o[0], int(o[1])
		if code == 255 || len(o) < 2+n {
			return nil
		}
		if code == 71 {
			return o[2 : 2+n]
		}
		o = o[2+n:]
	}
	return nil
}
