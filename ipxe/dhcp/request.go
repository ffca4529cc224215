package dhcp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"slices"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"
)

// request is a client's packet as the handler reads it: the fixed BOOTP
// fields and an index of its options. parseRequest fills it from the
// packet's bytes without allocating (option values point into the packet,
// or into scratch when an option came in several parts); a reader reuses
// one request packet after packet, so its values are valid until the next
// parse. insomniacslk/dhcp's FromBytes built a map and a slice per option
// for every packet: with its encoder, the GC's fifth of the server's CPU
// in a storm. That parser remains the reference (FuzzParseRequest holds
// this one to it) and builds requests for the rare paths (fromMessage).
type request struct {
	op, htype, hlen byte
	xid             dhcpv4.TransactionID
	flags           uint16
	ciaddr, giaddr  [4]byte
	chaddr          [16]byte

	present [4]uint64   // bit c: option c was sent
	val     [256][]byte // option c's value (RFC 3396: its parts joined)

	// Parse state, kept for the next packet's parse.
	parts            []optPart
	n, tot, at, fill [256]int32 // per code: parts, bytes, offset in scratch, bytes copied
	scratch          []byte
	snameOverlay     bool // the sname field holds options (option 52)
	fileOverlay      bool // the file field holds options
}

// optPart is one instance of an option in the packet: code and value at
// b[off:off+len].
type optPart struct {
	code     byte
	off, len int32
}

var (
	errShort  = errors.New("packet shorter than a DHCP header")
	errCookie = errors.New("no DHCP magic cookie")
	errNoEnd  = errors.New("options not closed by End")
	errOptLen = errors.New("option runs past its field")
)

var magicCookie = [4]byte{99, 130, 83, 99}

// parseRequest parses b into r as dhcpv4.FromBytes and parse (option 52
// honoured) do, and refuses what they refuse: a packet shorter than the
// header, without the magic cookie, whose options field has no End, an
// option longer than its field, or a malformed option 52. An option sent
// several times is the concatenation of its instances, in the order
// options field, file field, sname field (RFC 3396 5).
func (r *request) parse(b []byte) error {
	if len(b) < headerLen {
		return errShort
	}
	if [4]byte(b[headerLen-4:headerLen]) != magicCookie {
		return errCookie
	}
	r.op, r.htype, r.hlen = b[0], b[1], min(b[2], 16)
	r.xid = dhcpv4.TransactionID(b[4:8])
	r.flags = binary.BigEndian.Uint16(b[10:12])
	r.ciaddr, r.giaddr = [4]byte(b[12:16]), [4]byte(b[24:28])
	r.chaddr = [16]byte(b[28:44])
	r.parts = r.parts[:0]
	// No options at all is no options field to close (FromBytes takes it).
	if err := r.scan(b, headerLen, len(b), len(b) > headerLen); err != nil {
		return err
	}
	ov, err := r.overload(b)
	if err != nil {
		return err
	}
	r.fileOverlay, r.snameOverlay = ov&overloadFile != 0, ov&overloadSname != 0
	if r.fileOverlay {
		if err := r.scan(b, fileOff, fileOff+fileLen, false); err != nil {
			return errOverload
		}
	}
	if r.snameOverlay {
		if err := r.scan(b, snameOff, snameOff+snameLen, false); err != nil {
			return errOverload
		}
	}
	r.index(b)
	return nil
}

// scan adds the options of b[lo:hi] to r.parts, up to End. The options
// field must end with End; in the overloaded fields the field's end does,
// and a last code without its length byte is an empty option (as
// insomniacslk's Options.FromBytes reads it).
func (r *request) scan(b []byte, lo, hi int, needEnd bool) error {
	for i := lo; i < hi; {
		c := b[i]
		i++
		switch {
		case c == dhcpv4.OptionPad.Code():
			continue
		case c == dhcpv4.OptionEnd.Code():
			return nil
		case i == hi:
			if needEnd {
				return errNoEnd
			}
			r.parts = append(r.parts, optPart{code: c, off: int32(i)})
			return nil
		}
		n := int(b[i])
		i++
		if i+n > hi {
			return errOptLen
		}
		r.parts = append(r.parts, optPart{code: c, off: int32(i), len: int32(n)})
		i += n
	}
	if needEnd {
		return errNoEnd
	}
	return nil
}

// overload reads option 52 from the options field's parts and removes it
// (the fields it names are read next; an option 52 inside them is only an
// option). It returns 0 when absent or empty (parse ignores an empty one:
// Options.Get returns nil for it).
func (r *request) overload(b []byte) (byte, error) {
	const code = 52 // dhcpv4.OptionOptionOverload
	total, flag := 0, byte(0)
	for _, p := range r.parts {
		if p.code == code {
			total += int(p.len)
			if p.len > 0 {
				flag = b[p.off]
			}
		}
	}
	if total == 0 {
		return 0, nil
	}
	if total != 1 || flag < overloadFile || flag > overloadFile|overloadSname {
		return 0, errOverload
	}
	r.parts = slices.DeleteFunc(r.parts, func(p optPart) bool { return p.code == code })
	return flag, nil
}

// index points r.val at each option's value: in b when sent once, joined
// in r.scratch when sent several times.
func (r *request) index(b []byte) {
	r.present = [4]uint64{}
	clear(r.n[:])
	clear(r.tot[:])
	size := 0
	for _, p := range r.parts {
		r.n[p.code]++
		r.tot[p.code] += p.len
		size += int(p.len)
	}
	if cap(r.scratch) < size {
		r.scratch = make([]byte, size)
	}
	r.scratch = r.scratch[:size]
	var used int32
	for _, p := range r.parts {
		c := p.code
		v := b[p.off : p.off+p.len : p.off+p.len]
		if r.n[c] == 1 {
			r.present[c/64] |= 1 << (c % 64)
			r.val[c] = v
			continue
		}
		if !r.has(c) {
			// The first part of a split option: room for all of them.
			r.present[c/64] |= 1 << (c % 64)
			r.at[c], r.fill[c] = used, 0
			used += r.tot[c]
		}
		start := r.at[c]
		copy(r.scratch[start+r.fill[c]:], v)
		r.fill[c] += p.len
		end := start + r.fill[c]
		r.val[c] = r.scratch[start:end:end]
	}
}

// fromMessage fills r from a message insomniacslk's parser built (Handle's
// callers: tests, the PXE boot server port).
func (r *request) fromMessage(m *dhcpv4.DHCPv4) {
	r.op, r.htype, r.hlen = byte(m.OpCode), byte(m.HWType), byte(min(len(m.ClientHWAddr), 255))
	r.xid, r.flags = m.TransactionID, m.Flags
	r.ciaddr, r.giaddr = ip4(m.ClientIPAddr), ip4(m.GatewayIPAddr)
	copy(r.chaddr[:], m.ClientHWAddr)
	r.present = [4]uint64{}
	for c, v := range m.Options {
		r.present[c/64] |= 1 << (c % 64)
		r.val[c] = v
	}
}

func ip4(ip net.IP) [4]byte {
	if v4 := ip.To4(); v4 != nil {
		return [4]byte(v4)
	}
	return [4]byte{}
}

// has reports whether option c was sent.
func (r *request) has(c uint8) bool { return r.present[c/64]&(1<<(c%64)) != 0 }

// opt is option c's value; nil when absent or empty (as Options.Get).
func (r *request) opt(c uint8) []byte {
	if !r.has(c) || len(r.val[c]) == 0 {
		return nil
	}
	return r.val[c]
}

// mac is the client's hardware address (hlen bytes).
func (r *request) mac() net.HardwareAddr { return r.chaddr[:min(r.hlen, 16)] }

// msgType is option 53 (MessageTypeNone unless one byte).
func (r *request) msgType() dhcpv4.MessageType {
	if v := r.opt(dhcpv4.OptionDHCPMessageType.Code()); len(v) == 1 {
		return dhcpv4.MessageType(v[0])
	}
	return dhcpv4.MessageTypeNone
}

// addrOpt is an address option (exactly 4 bytes); ok false otherwise.
func (r *request) addrOpt(c dhcpv4.OptionCode) (netip.Addr, bool) {
	if v := r.opt(c.Code()); len(v) == 4 {
		return netip.AddrFrom4([4]byte(v)), true
	}
	return netip.Addr{}, false
}

// relay is giaddr (invalid: none).
func (r *request) relay() netip.Addr {
	if gi := netip.AddrFrom4(r.giaddr); !gi.IsUnspecified() {
		return gi
	}
	return netip.Addr{}
}

// clientIP is ciaddr (invalid: 0.0.0.0).
func (r *request) clientIP() netip.Addr {
	if ci := netip.AddrFrom4(r.ciaddr); !ci.IsUnspecified() {
		return ci
	}
	return netip.Addr{}
}

// hostname is option 12 without trailing NULs (as HostName).
func (r *request) hostname() string {
	return string(bytes.TrimRight(r.opt(dhcpv4.OptionHostName.Code()), "\x00"))
}

// vendorClass is option 60.
func (r *request) vendorClass() []byte { return r.opt(dhcpv4.OptionClassIdentifier.Code()) }

// maxMessage is the reply size the client takes (option 57, RFC 2132
// 9.10, counting IP and UDP headers as ISC dhcpd and Kea read it; never
// less than minMessage).
func (r *request) maxMessage() int {
	if v := r.opt(dhcpv4.OptionMaximumDHCPMessageSize.Code()); len(v) == 2 {
		return max(minMessage, int(binary.BigEndian.Uint16(v))-28)
	}
	return minMessage
}

// isIPXE reports whether the user class (option 77, an RFC 3004 list, or
// one plain string as iPXE sends it) says "iPXE".
func (r *request) isIPXE() bool {
	v := r.opt(dhcpv4.OptionUserClassInformation.Code())
	if v == nil {
		return false
	}
	list, ok := v, true
	for len(list) > 0 {
		n := int(list[0])
		if n == 0 || 1+n > len(list) {
			ok = false
			break
		}
		list = list[1+n:]
	}
	if !ok {
		return string(v) == "iPXE"
	}
	for list = v; len(list) > 0; list = list[1+int(list[0]):] {
		if string(list[1:1+int(list[0])]) == "iPXE" {
			return true
		}
	}
	return false
}

// arch is the client's first option 93 architecture (ok false when the
// option is absent or not a list of 16-bit values).
func (r *request) arch() (iana.Arch, bool) {
	v := r.opt(dhcpv4.OptionClientSystemArchitectureType.Code())
	if len(v) == 0 || len(v)%2 != 0 {
		return 0, false
	}
	return iana.Arch(binary.BigEndian.Uint16(v)), true
}
