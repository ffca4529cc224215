package dhcp

import (
	"errors"
	"maps"
	"math"
	"slices"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

// Option overload (RFC 2132 9.3): the BOOTP sname (64 bytes) and file (128
// bytes) fields may carry options when the options field is full; option
// 52 says which (1 file, 2 sname, 3 both). insomniacslk/dhcp neither reads
// nor writes it (its FromBytes cuts both fields at the first NUL, its
// ToBytes writes them as strings), so parse and overload do it on the raw
// bytes.
const (
	overloadFile  = 1
	overloadSname = 2

	snameOff, snameLen = 44, 64
	fileOff, fileLen   = 108, 128
	// headerLen is the fixed part of a message, magic cookie included.
	headerLen = 240
)

var errOverload = errors.New("malformed option overload (52)")

// parse decodes a client's packet. When it carries option 52, the options
// in the file and sname fields are merged in, after the options field's
// and in that order (RFC 3396 5: an option split over several instances is
// their concatenation in that order), and the fields no longer read as a
// file or server name.
func parse(b []byte) (*dhcpv4.DHCPv4, error) {
	m, err := dhcpv4.FromBytes(b)
	if err != nil {
		return nil, err
	}
	ov := m.Options.Get(dhcpv4.OptionOptionOverload)
	if ov == nil {
		return m, nil
	}
	if len(ov) != 1 || ov[0] < 1 || ov[0] > 3 || len(b) < headerLen {
		return nil, errOverload
	}
	m.Options.Del(dhcpv4.OptionOptionOverload)
	if ov[0]&overloadFile != 0 {
		if err := m.Options.FromBytes(b[fileOff : fileOff+fileLen]); err != nil {
			return nil, errOverload
		}
		m.BootFileName = ""
	}
	if ov[0]&overloadSname != 0 {
		if err := m.Options.FromBytes(b[snameOff : snameOff+snameLen]); err != nil {
			return nil, errOverload
		}
		m.ServerHostName = ""
	}
	return m, nil
}

// overload serialises reply within limit bytes by moving options into the
// sname field, then (the boot file name going to option 67) into the file
// field too. Option 53 and 54 stay in the options field, where every client
// looks first, and so does relay agent information (82): relays strip it
// there (RFC 3046 2.1) and read no overloaded field. It returns nil when
// even both fields do not make room.
func overload(reply *dhcpv4.DHCPv4, limit int) []byte {
	if reply.ServerHostName != "" {
		return nil
	}
	if b := overloadInto(reply, limit, false); b != nil {
		return b
	}
	return overloadInto(reply, limit, true)
}

// overloadInto packs reply's options, first fit in code order, into the
// options field, the sname field and, with useFile, the file field.
func overloadInto(reply *dhcpv4.DHCPv4, limit int, useFile bool) []byte {
	out := *reply
	out.Options = dhcpv4.Options{}
	opts := maps.Clone(reply.Options)
	if opts == nil {
		opts = dhcpv4.Options{}
	}
	if useFile && out.BootFileName != "" {
		opts.Update(dhcpv4.OptBootFileName(out.BootFileName))
		out.BootFileName = ""
	}
	// Room in each area for options and its End; the options field also
	// gives 3 bytes to option 52.
	room := []int{limit - headerLen - 1 - 3, snameLen - 1, 0}
	if useFile {
		room[2] = fileLen - 1
	}
	areas := make([]dhcpv4.Options, 3)
	for i := range areas {
		areas[i] = dhcpv4.Options{}
	}
	codes := make([]uint8, 0, len(opts))
	for c := range opts {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	// The pinned options take their room first.
	pinned := func(c uint8) bool {
		return c == dhcpv4.OptionDHCPMessageType.Code() || c == dhcpv4.OptionServerIdentifier.Code() ||
			c == dhcpv4.OptionRelayAgentInformation.Code()
	}
	for _, c := range codes {
		if pinned(c) {
			areas[0][c] = opts[c]
			room[0] -= encodedLen(opts[c])
		}
	}
	if room[0] < 0 {
		return nil
	}
	var flag byte
	for _, c := range codes {
		if pinned(c) {
			continue
		}
		n := encodedLen(opts[c])
		i := slices.IndexFunc(room, func(r int) bool { return r >= n })
		if i < 0 {
			return nil
		}
		areas[i][c] = opts[c]
		room[i] -= n
		flag |= [...]byte{0, overloadSname, overloadFile}[i]
	}
	out.Options = areas[0]
	if flag != 0 {
		out.Options.Update(dhcpv4.OptGeneric(dhcpv4.OptionOptionOverload, []byte{flag}))
	}
	b := out.ToBytes()
	if len(b) > limit {
		return nil
	}
	writeArea(b[snameOff:snameOff+snameLen], areas[1])
	writeArea(b[fileOff:fileOff+fileLen], areas[2])
	return b
}

// writeArea writes opts and End into field (the rest zeroed: padding); an
// area without options is left as it is. The caller left room for End.
func writeArea(field []byte, opts dhcpv4.Options) {
	if len(opts) == 0 {
		return
	}
	clear(field)
	n := copy(field, opts.ToBytes())
	field[n] = dhcpv4.OptionEnd.Code()
}

// encodedLen is the bytes option value v takes on the wire: one instance
// per 255 bytes (RFC 3396), each with code and length.
func encodedLen(v []byte) int {
	if len(v) == 0 {
		return 2
	}
	return len(v) + 2*((len(v)+math.MaxUint8-1)/math.MaxUint8)
}
