package dhcp

import (
	"bytes"
	"net"
	"net/netip"
	"slices"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"
)

// Ports of the protocol (RFC 2131).
const (
	ServerPort = 67
	ClientPort = 68
)

// answer is a reply the handler decided, not yet encoded: the server
// writes it straight into a datagram (appendAnswer), Handle's callers get
// insomniacslk's message of it (message). It reads the request it answers,
// so it is encoded before the next packet is parsed.
type answer struct {
	req            *request
	t              dhcpv4.MessageType
	yiaddr, siaddr netip.Addr // invalid: 0.0.0.0
	echoCIAddr     bool       // ciaddr is the request's (ACK to an INFORM)
	broadcast      bool       // set the broadcast flag (NAK)
	wire           *subnetWire
	times          *[3][]byte // options 51, 58, 59 (nil: none)
	hostname       string     // option 12
	class          string     // option 60
	tftp           bool       // option 66: NextServer
	file           string     // option 67, and the file field when it fits
}

// newAnswer starts a reply of type t to req; its relay agent information
// (RFC 3046) and client identifier (RFC 6842) are echoed when encoded.
func newAnswer(req *request, t dhcpv4.MessageType) answer { return answer{req: req, t: t} }

// reply is an OFFER or ACK of a (invalid for INFORM) with the subnet's
// options and the client's boot file.
func (h *Handler) reply(c *client, t dhcpv4.MessageType, a netip.Addr) answer {
	r := newAnswer(c.req, t)
	w := c.wire
	if a.IsValid() {
		r.yiaddr = a
		r.times = &w.times[0]
		if !c.known {
			r.times = &w.times[1]
		}
	}
	r.echoCIAddr = t == dhcpv4.MessageTypeAck && !a.IsValid()
	r.wire = w
	r.hostname = c.xname
	h.boot(c.req, &r)
	return r
}

func (h *Handler) nak(c *client) answer {
	r := newAnswer(c.req, dhcpv4.MessageTypeNak)
	r.broadcast = true // RFC 2131 4.3.2: a relay broadcasts a NAK to the client
	return r
}

// boot adds the boot file for req's firmware: iPXE gets its BSS boot
// script URL, UEFI HTTP boot an http URL of the iPXE binary, PXE firmware
// the iPXE binary for its architecture by TFTP from NextServer. Other
// clients get no boot file. It reports whether one was added.
func (h *Handler) boot(req *request, r *answer) bool {
	vc := req.vendorClass()
	switch {
	case req.isIPXE():
		if h.cfg.BootURL == "" {
			return false
		}
		r.file = h.scriptURL
	case bytes.HasPrefix(vc, []byte("HTTPClient")):
		f, url := h.fileFor(req)
		if f == "" || h.cfg.BootURL == "" {
			return false
		}
		// UEFI HTTP boot takes the offer only with its own vendor class echoed.
		r.class = "HTTPClient"
		r.file = url
	case bytes.HasPrefix(vc, []byte("PXEClient")) || req.has(dhcpv4.OptionClientSystemArchitectureType.Code()):
		f, _ := h.fileFor(req)
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
		r.siaddr = h.cfg.NextServer
		r.tftp = true
		r.file = f
	default:
		return false
	}
	return true
}

// message is insomniacslk's message of r, as the server encodes it
// (appendAnswer writes the same bytes).
func (h *Handler) message(r *answer) *dhcpv4.DHCPv4 {
	req := r.req
	m := &dhcpv4.DHCPv4{OpCode: dhcpv4.OpcodeBootReply, HWType: iana.HWType(req.htype), TransactionID: req.xid,
		ClientHWAddr: slices.Clone(req.mac()), Flags: req.flags, GatewayIPAddr: net.IP(slices.Clone(req.giaddr[:])),
		ClientIPAddr: net.IPv4zero, YourIPAddr: net.IPv4zero, ServerIPAddr: net.IPv4zero, Options: make(dhcpv4.Options, 14)}
	if r.broadcast {
		m.SetBroadcast()
	}
	for _, o := range [...]dhcpv4.OptionCode{dhcpv4.OptionRelayAgentInformation, dhcpv4.OptionClientIdentifier} {
		if v := req.opt(o.Code()); v != nil {
			m.Options[o.Code()] = slices.Clone(v)
		}
	}
	m.Options[dhcpv4.OptionDHCPMessageType.Code()] = h.types[r.t]
	m.Options[dhcpv4.OptionServerIdentifier.Code()] = h.sid
	if r.yiaddr.IsValid() {
		m.YourIPAddr = r.yiaddr.AsSlice()
	}
	if r.siaddr.IsValid() {
		m.ServerIPAddr = r.siaddr.AsSlice()
	}
	if r.echoCIAddr {
		m.ClientIPAddr = net.IP(slices.Clone(req.ciaddr[:]))
	}
	if r.times != nil {
		m.Options[dhcpv4.OptionIPAddressLeaseTime.Code()] = r.times[0]
		m.Options[dhcpv4.OptionRenewTimeValue.Code()] = r.times[1]
		m.Options[dhcpv4.OptionRebindingTimeValue.Code()] = r.times[2]
	}
	if w := r.wire; w != nil {
		m.Options[dhcpv4.OptionSubnetMask.Code()] = w.mask
		if w.router != nil {
			m.Options[dhcpv4.OptionRouter.Code()] = w.router
		}
		if w.dns != nil {
			m.Options[dhcpv4.OptionDomainNameServer.Code()] = w.dns
		}
	}
	if r.hostname != "" {
		m.UpdateOption(dhcpv4.OptHostName(r.hostname))
	}
	if r.class != "" {
		m.UpdateOption(dhcpv4.OptClassIdentifier(r.class))
	}
	if r.tftp {
		m.UpdateOption(dhcpv4.OptTFTPServerName(h.nextServer))
	}
	if r.file != "" {
		setFile(m, r.file)
	}
	return m
}

// minMessage is the DHCP message every client accepts (RFC 2131 2: a 576
// byte IP datagram less the 28 bytes of IP and UDP headers).
const minMessage = 576 - 28

// encode serialises reply to fit limit bytes (the client's maxMessage).
// Over the limit, it first sheds what the fixed fields already carry:
// option 67 when the BOOTP file field holds the same name, option 66 when
// siaddr names the TFTP server. Still over, it overloads the sname and
// file fields (option 52, see overload). A reply that does not fit even so
// (a relay's option 82 near 255 bytes) goes out as it is: truncating
// options would break the boot, and clients behind such relays take
// Ethernet-sized replies in practice. The server's own encoder
// (appendAnswer) hands the replies that do not fit to this one.
func encode(reply *dhcpv4.DHCPv4, limit int) []byte {
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

// bootFile is one iPXE binary: its name under the TFTP root and its URL
// for UEFI HTTP boot (built once, not per reply).
type bootFile struct{ name, url string }

// fileFor is the iPXE binary for req's architecture (its first option 93
// entry; BIOS when absent); a zero bootFile when we have none.
func (h *Handler) fileFor(req *request) (name, url string) {
	a, ok := req.arch()
	if !ok {
		a = iana.INTEL_X86PC
	}
	var f bootFile
	switch a {
	case iana.INTEL_X86PC:
		f = h.files[0]
	case iana.EFI_X86_64, iana.EFI_BC, iana.EFI_X86_64_HTTP:
		f = h.files[1]
	case iana.EFI_ARM64, iana.EFI_ARM64_HTTP:
		f = h.files[2]
	}
	if f.name == "" || (h.cfg.Has != nil && !h.cfg.Has(f.name)) {
		return "", ""
	}
	return f.name, f.url
}

// archName is the architecture of the lease event: iPXE's ${buildarch}
// spelling, which BSS's Unknown-<arch> tags use ("" when not sent).
func archName(req *request) string {
	a, ok := req.arch()
	if !ok {
		return ""
	}
	switch a {
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
func (h *Handler) proxy(req *request, bootServer bool) outcome {
	var t dhcpv4.MessageType
	switch mt := req.msgType(); {
	case mt == dhcpv4.MessageTypeDiscover && !bootServer:
		t = dhcpv4.MessageTypeOffer
	case mt == dhcpv4.MessageTypeRequest || mt == dhcpv4.MessageTypeInform:
		if sid, ok := req.addrOpt(dhcpv4.OptionServerIdentifier); !bootServer || ok && sid != h.cfg.ServerID {
			return outcome{drop: DropOtherServer}
		}
		t = dhcpv4.MessageTypeAck
	default:
		return outcome{drop: DropUnknownType}
	}
	r := newAnswer(req, t)
	if !h.boot(req, &r) {
		return outcome{drop: DropNotPXE}
	}
	if r.class == "" {
		r.class = "PXEClient"
	}
	// iPXE takes a proxy offer's boot options only with both a boot file
	// and a next-server (dhcp_has_pxeopts in its net/udp/dhcp.c): without
	// siaddr it asks again on port 4011 and drops that answer for the same
	// reason, then finds nothing to boot. So siaddr is set for every
	// client, iPXE's HTTP script URL included.
	if !r.siaddr.IsValid() || r.siaddr.IsUnspecified() {
		r.siaddr = h.cfg.NextServer
	}
	return outcome{ans: r, reply: true}
}

// Destination is where a reply to req goes (RFC 2131 4.1): back to the relay
// at giaddr:relayPort; a NAK, or a reply to a client without an address,
// broadcast to clientPort; else to ciaddr:clientPort.
func Destination(req, reply *dhcpv4.DHCPv4, relayPort, clientPort int) *net.UDPAddr {
	var r request
	r.giaddr, r.ciaddr = ip4(req.GatewayIPAddr), ip4(req.ClientIPAddr)
	dst := &net.UDPAddr{IP: make(net.IP, 4)}
	destination(&r, reply.MessageType(), relayPort, clientPort, dst)
	return dst
}

// destination sets dst (its IP 4 bytes long) to where a reply of type t
// to req goes, as Destination says.
func destination(req *request, t dhcpv4.MessageType, relayPort, clientPort int, dst *net.UDPAddr) {
	switch {
	case req.relay().IsValid():
		copy(dst.IP, req.giaddr[:])
		dst.Port = relayPort
	case t == dhcpv4.MessageTypeNak || !req.clientIP().IsValid():
		copy(dst.IP, net.IPv4bcast.To4())
		dst.Port = clientPort
	default:
		copy(dst.IP, req.ciaddr[:])
		dst.Port = clientPort
	}
}
