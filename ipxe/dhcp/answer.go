package dhcp

import (
	"encoding/binary"
	"math"
	"net/netip"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

// bootpMinLen is the smallest BOOTP message (RFC 951); shorter replies
// are padded, as insomniacslk's ToBytes pads them (some relays drop less).
const bootpMinLen = 300

// appendAnswer appends r's reply to dst, byte for byte what
// encode(h.message(r), limit) sends when it fits the client's limit
// (options in code order, relay agent information last, padded to 300
// bytes; TestAnswerMatchesMessage holds them equal), without building
// insomniacslk's message and options map. ok is false when the reply does
// not fit: encode then sheds and overloads (rare: a relay's long option
// 82, a long client identifier).
func (h *Handler) appendAnswer(dst []byte, r *answer) (b []byte, ok bool) {
	req := r.req
	start := len(dst)
	b = append(dst, byte(dhcpv4.OpcodeBootReply), req.htype, req.hlen, 0)
	b = append(b, req.xid[:]...)
	flags := req.flags
	if r.broadcast {
		flags |= 0x8000
	}
	b = binary.BigEndian.AppendUint16(append(b, 0, 0), flags) // secs, flags
	var ci [4]byte
	if r.echoCIAddr {
		ci = req.ciaddr
	}
	b = append(b, ci[:]...)
	b = appendAddr(b, r.yiaddr)
	b = appendAddr(b, r.siaddr)
	b = append(b, req.giaddr[:]...)
	var chaddr [16]byte
	copy(chaddr[:], req.mac())
	b = append(b, chaddr[:]...)
	var fields [snameLen + fileLen]byte
	if len(r.file) <= 127 {
		copy(fields[snameLen:], r.file)
	}
	b = append(b, fields[:]...)
	b = append(b, magicCookie[:]...)
	b = h.appendOptions(b, r)
	b = append(b, dhcpv4.OptionEnd.Code())
	for len(b)-start < bootpMinLen {
		b = append(b, dhcpv4.OptionPad.Code())
	}
	return b, len(b)-start <= req.maxMessage()
}

// appendOptions appends r's options in code order, 82 last.
func (h *Handler) appendOptions(b []byte, r *answer) []byte {
	w := r.wire
	if w != nil {
		b = appendOpt(b, dhcpv4.OptionSubnetMask, w.mask)
		if w.router != nil {
			b = appendOpt(b, dhcpv4.OptionRouter, w.router)
		}
		if w.dns != nil {
			b = appendOpt(b, dhcpv4.OptionDomainNameServer, w.dns)
		}
	}
	if r.hostname != "" {
		b = appendOpt(b, dhcpv4.OptionHostName, r.hostname)
	}
	if r.times != nil {
		b = appendOpt(b, dhcpv4.OptionIPAddressLeaseTime, r.times[0])
	}
	b = appendOpt(b, dhcpv4.OptionDHCPMessageType, h.types[r.t])
	b = appendOpt(b, dhcpv4.OptionServerIdentifier, h.sid)
	if r.times != nil {
		b = appendOpt(b, dhcpv4.OptionRenewTimeValue, r.times[1])
		b = appendOpt(b, dhcpv4.OptionRebindingTimeValue, r.times[2])
	}
	if r.class != "" {
		b = appendOpt(b, dhcpv4.OptionClassIdentifier, r.class)
	}
	if v := r.req.opt(dhcpv4.OptionClientIdentifier.Code()); v != nil {
		b = appendOpt(b, dhcpv4.OptionClientIdentifier, v)
	}
	if r.tftp {
		b = appendOpt(b, dhcpv4.OptionTFTPServerName, h.nextServer)
	}
	if r.file != "" {
		b = appendOpt(b, dhcpv4.OptionBootfileName, r.file)
	}
	if v := r.req.opt(dhcpv4.OptionRelayAgentInformation.Code()); v != nil {
		b = appendOpt(b, dhcpv4.OptionRelayAgentInformation, v)
	}
	return b
}

func appendAddr(b []byte, a netip.Addr) []byte {
	if !a.IsValid() {
		return append(b, 0, 0, 0, 0)
	}
	a4 := a.As4()
	return append(b, a4[:]...)
}

// appendOpt appends option c with value v, in as many instances of at most
// 255 bytes as it takes (RFC 3396).
func appendOpt[V []byte | string](b []byte, c dhcpv4.OptionCode, v V) []byte {
	code := c.Code()
	if len(v) == 0 {
		return append(b, code, 0)
	}
	for len(v) > 0 {
		n := min(len(v), math.MaxUint8)
		b = append(append(b, code, byte(n)), v[:n]...)
		v = v[n:]
	}
	return b
}
