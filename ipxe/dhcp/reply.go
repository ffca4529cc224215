package dhcp

import (
	"net"
	"net/netip"
	"strings"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"
)

// Ports of the protocol (RFC 2131).
const (
	ServerPort = 67
	ClientPort = 68
)

// newReply starts a reply to req: its transaction, MAC, flags, giaddr and
// relay agent information (RFC 3046) and client identifier (RFC 6842).
func (h *Handler) newReply(req *dhcpv4.DHCPv4, t dhcpv4.MessageType) *dhcpv4.DHCPv4 {
	// Room for the options a reply carries without growing the map.
	r := &dhcpv4.DHCPv4{OpCode: dhcpv4.OpcodeBootReply, HWType: req.HWType, TransactionID: req.TransactionID,
		ClientHWAddr: req.ClientHWAddr, Flags: req.Flags, GatewayIPAddr: req.GatewayIPAddr,
		ClientIPAddr: net.IPv4zero, YourIPAddr: net.IPv4zero, ServerIPAddr: net.IPv4zero, Options: make(dhcpv4.Options, 14)}
	for _, o := range [...]dhcpv4.OptionCode{dhcpv4.OptionRelayAgentInformation, dhcpv4.OptionClientIdentifier} {
		if v := req.Options.Get(o); v != nil {
			r.Options[o.Code()] = v
		}
	}
	r.Options[dhcpv4.OptionDHCPMessageType.Code()] = h.types[t]
	r.Options[dhcpv4.OptionServerIdentifier.Code()] = h.sid
	return r
}

// reply is an OFFER or ACK of a (invalid for INFORM) with the subnet's
// options and the client's boot file.
func (h *Handler) reply(c *client, t dhcpv4.MessageType, a netip.Addr) *dhcpv4.DHCPv4 {
	r := h.newReply(c.req, t)
	w := c.wire
	if a.IsValid() {
		r.YourIPAddr = a.AsSlice()
		times := &w.times[0]
		if !c.known {
			times = &w.times[1]
		}
		r.Options[dhcpv4.OptionIPAddressLeaseTime.Code()] = times[0]
		r.Options[dhcpv4.OptionRenewTimeValue.Code()] = times[1]
		r.Options[dhcpv4.OptionRebindingTimeValue.Code()] = times[2]
	}
	if t == dhcpv4.MessageTypeAck && !a.IsValid() {
		r.ClientIPAddr = c.req.ClientIPAddr
	}
	r.Options[dhcpv4.OptionSubnetMask.Code()] = w.mask
	if w.router != nil {
		r.Options[dhcpv4.OptionRouter.Code()] = w.router
	}
	if w.dns != nil {
		r.Options[dhcpv4.OptionDomainNameServer.Code()] = w.dns
	}
	if c.xname != "" {
		r.UpdateOption(dhcpv4.OptHostName(c.xname))
	}
	h.boot(c.req, r)
	return r
}

func (h *Handler) nak(c *client) *dhcpv4.DHCPv4 {
	r := h.newReply(c.req, dhcpv4.MessageTypeNak)
	r.SetBroadcast() // RFC 2131 4.3.2: a relay broadcasts a NAK to the client
	return r
}

// boot adds the boot file for req's firmware: iPXE gets its BSS boot
// script URL, UEFI HTTP boot an http URL of the iPXE binary, PXE firmware
// the iPXE binary for its architecture by TFTP from NextServer. Other
// clients get no boot file. It reports whether one was added.
func (h *Handler) boot(req *dhcpv4.DHCPv4, r *dhcpv4.DHCPv4) bool {
	vc := req.ClassIdentifier()
	switch {
	case isIPXE(req):
		if h.cfg.BootURL == "" {
			return false
		}
		setFile(r, h.cfg.BootURL+"/boot/v1/bootscript?mac=${net0/mac}")
	case strings.HasPrefix(vc, "HTTPClient"):
		f := h.fileFor(arch(req))
		if f == "" || h.cfg.BootURL == "" {
			return false
		}
		// UEFI HTTP boot takes the offer only with its own vendor class echoed.
		r.UpdateOption(dhcpv4.OptClassIdentifier("HTTPClient"))
		setFile(r, h.cfg.BootURL+"/ipxe/"+f)
	case strings.HasPrefix(vc, "PXEClient") || req.Options.Has(dhcpv4.OptionClientSystemArchitectureType):
		f := h.fileFor(arch(req))
		if f == "" {
			return false
		}
		// No option 60 "PXEClient" back: with it and no option 43, EDK2's
		// PXE (OVMF, most UEFI firmware) takes the offer for a BINL one and
		// asks a boot server on port 4011 for the file instead of using it
		// ("PXE-E16: No valid offer received", seen with OVMF in
		// TestQEMUBoot). A plain offer with siaddr and a file is what ISC
		// dhcpd sends, and BIOS PXE ROMs and EDK2 boot from it. ProxyDHCP
		// (proxy) adds the class, which a proxy offer must carry.
		r.ServerIPAddr = h.cfg.NextServer.AsSlice()
		r.UpdateOption(dhcpv4.OptTFTPServerName(h.cfg.NextServer.String()))
		setFile(r, f)
	default:
		return false
	}
	return true
}

// minMessage is the DHCP message every client accepts (RFC 2131 2: a 576
// byte IP datagram less the 28 bytes of IP and UDP headers).
const minMessage = 576 - 28

// encode serialises reply to fit the client's Maximum DHCP Message Size
// (option 57, RFC 2132 9.10, which counts the IP and UDP headers as ISC
// dhcpd and Kea read it; 576 when absent or smaller). Over the limit, it
// first sheds what the fixed fields already carry: option 67 when the
// BOOTP file field holds the same name, option 66 when siaddr names the
// TFTP server. Still over, it overloads the sname and file fields (option
// 52, see overload). A reply that does not fit even so (a relay's option
// 82 near 255 bytes) goes out as it is: truncating options would break the
// boot, and clients behind such relays take Ethernet-sized replies in
// practice.
func encode(req, reply *dhcpv4.DHCPv4) []byte {
	limit := minMessage
	if m, err := req.MaxMessageSize(); err == nil && int(m)-28 > limit {
		limit = int(m) - 28
	}
	b := reply.ToBytes()
	if len(b) <= limit {
		return b
	}
	if f := reply.BootFileName; f != "" && reply.BootFileNameOption() == f {
		reply.Options.Del(dhcpv4.OptionBootfileName)
	}
	if !reply.ServerIPAddr.IsUnspecified() && reply.TFTPServerName() == reply.ServerIPAddr.String() {
		reply.Options.Del(dhcpv4.OptionTFTPServerName)
	}
	if b = reply.ToBytes(); len(b) <= limit {
		return b
	}
	if ob := overload(reply, limit); ob != nil {
		return ob
	}
	return b
}

// setFile sets the boot file in the BOOTP file field and in option 67 (the
// field holds 127 bytes; the option any length).
func setFile(r *dhcpv4.DHCPv4, f string) {
	if len(f) <= 127 {
		r.BootFileName = f
	}
	r.UpdateOption(dhcpv4.OptBootFileName(f))
}

// isIPXE reports whether req comes from iPXE (option 77 "iPXE").
func isIPXE(req *dhcpv4.DHCPv4) bool {
	for _, uc := range req.UserClass() {
		if uc == "iPXE" {
			return true
		}
	}
	return false
}

// arch is the client's first option 93 architecture; BIOS when absent.
func arch(req *dhcpv4.DHCPv4) iana.Arch {
	if a := req.ClientArch(); len(a) > 0 {
		return a[0]
	}
	return iana.INTEL_X86PC
}

// fileFor is the iPXE binary for architecture a ("" when we have none).
func (h *Handler) fileFor(a iana.Arch) string {
	var f string
	switch a {
	case iana.INTEL_X86PC:
		f = h.cfg.Files.BIOS
	case iana.EFI_X86_64, iana.EFI_BC, iana.EFI_X86_64_HTTP:
		f = h.cfg.Files.EFI64
	case iana.EFI_ARM64, iana.EFI_ARM64_HTTP:
		f = h.cfg.Files.ARM64
	}
	if f == "" || (h.cfg.Has != nil && !h.cfg.Has(f)) {
		return ""
	}
	return f
}

// archName is the architecture of the lease event: iPXE's ${buildarch}
// spelling, which BSS's Unknown-<arch> tags use ("" when not sent).
func archName(req *dhcpv4.DHCPv4) string {
	a := req.ClientArch()
	if len(a) == 0 {
		return ""
	}
	switch a[0] {
	case iana.INTEL_X86PC, iana.EFI_X86_64, iana.EFI_BC, iana.EFI_X86_64_HTTP:
		return "x86_64"
	case iana.EFI_IA32, iana.EFI_X86_HTTP:
		return "i386"
	case iana.EFI_ARM64, iana.EFI_ARM64_HTTP:
		return "arm64"
	case iana.EFI_ARM32, iana.EFI_ARM32_HTTP:
		return "arm32"
	}
	return ""
}

// proxy answers as a ProxyDHCP server: boot options only, no address, no
// lease, and only to clients that boot (PXE, UEFI HTTP or iPXE). On port
// 67 it answers DISCOVERs only (PXE 2.1, 2.2.4): a REQUEST there is the
// client taking the address server's offer, and when that server shares
// our address (server identifier) a proxy ACK would reach the client
// first and lack its address (EDK2 then DECLINEs: "Lease confirmed isn't
// the same as that in the offer", seen in TestQEMUProxyBoot). REQUESTs and
// INFORMs for the proxy come to the boot server port (bootServer).
func (h *Handler) proxy(req *dhcpv4.DHCPv4, bootServer bool) Result {
	var t dhcpv4.MessageType
	switch mt := req.MessageType(); {
	case mt == dhcpv4.MessageTypeDiscover && !bootServer:
		t = dhcpv4.MessageTypeOffer
	case mt == dhcpv4.MessageTypeRequest || mt == dhcpv4.MessageTypeInform:
		if sid, ok := addr(req.ServerIdentifier()); !bootServer || ok && sid != h.cfg.ServerID {
			return Result{Drop: DropOtherServer}
		}
		t = dhcpv4.MessageTypeAck
	default:
		return Result{Drop: DropUnknownType}
	}
	r := h.newReply(req, t)
	if !h.boot(req, r) {
		return Result{Drop: DropNotPXE}
	}
	if r.Options.Get(dhcpv4.OptionClassIdentifier) == nil {
		r.UpdateOption(dhcpv4.OptClassIdentifier("PXEClient"))
	}
	// iPXE takes a proxy offer's boot options only with both a boot file
	// and a next-server (dhcp_has_pxeopts in its net/udp/dhcp.c): without
	// siaddr it asks again on port 4011 and drops that answer for the same
	// reason, then finds nothing to boot. So siaddr is set for every
	// client, iPXE's HTTP script URL included.
	if r.ServerIPAddr.IsUnspecified() {
		r.ServerIPAddr = h.cfg.NextServer.AsSlice()
	}
	return Result{Reply: r}
}

// Destination is where a reply to req goes (RFC 2131 4.1): back to the relay
// at giaddr:relayPort; a NAK, or a reply to a client without an address,
// broadcast to clientPort; else to ciaddr:clientPort.
func Destination(req, reply *dhcpv4.DHCPv4, relayPort, clientPort int) *net.UDPAddr {
	if gi, ok := addr(req.GatewayIPAddr); ok && !gi.IsUnspecified() {
		return &net.UDPAddr{IP: gi.AsSlice(), Port: relayPort}
	}
	ci, ok := addr(req.ClientIPAddr)
	if reply.MessageType() == dhcpv4.MessageTypeNak || !ok || ci.IsUnspecified() {
		return &net.UDPAddr{IP: net.IPv4bcast, Port: clientPort}
	}
	return &net.UDPAddr{IP: ci.AsSlice(), Port: clientPort}
}
