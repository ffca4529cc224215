package snmpsim

// A small BER reader for the SNMP message header. The agent needs the
// version, and for v3 the msgGlobalData and USM parameters (RFC 3412 6,
// RFC 3414 2.4), before it has any key: gosnmp parses those only along
// with authentication and decryption, so the checks RFC 3414 3.2 puts
// before them (engine ID, user, security level) are made on this parse.
// It accepts BER as agents and managers send it (non-minimal lengths and
// integers included) and never reads past its input.

// tlv splits the first TLV off b: its tag, contents and what follows.
func tlv(b []byte) (tag byte, val, rest []byte, ok bool) {
	if len(b) < 2 {
		return 0, nil, nil, false
	}
	tag, n, i := b[0], int(b[1]), 2
	if n&0x80 != 0 {
		k := n & 0x7f
		if k == 0 || k > 3 || len(b) < 2+k {
			return 0, nil, nil, false // indefinite or absurd lengths: not SNMP
		}
		n = 0
		for _, c := range b[2 : 2+k] {
			n = n<<8 | int(c)
		}
		i += k
	}
	if n > len(b)-i {
		return 0, nil, nil, false
	}
	return tag, b[i : i+n], b[i+n:], true
}

// berInt reads an INTEGER's contents (two's complement, at most 5 bytes,
// enough for every 32-bit unsigned value with its leading zero).
func berInt(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 5 {
		return 0, false
	}
	n := int64(int8(v[0]))
	for _, c := range v[1:] {
		n = n<<8 | int64(c)
	}
	return n, true
}

// BER tags the header uses.
const (
	tagInt      = 0x02
	tagOctets   = 0x04
	tagSequence = 0x30
)

// next reads one TLV of the wanted tag from *b and advances it.
func next(b *[]byte, tag byte) ([]byte, bool) {
	t, v, rest, ok := tlv(*b)
	if !ok || t != tag {
		return nil, false
	}
	*b = rest
	return v, true
}

// nextInt reads one INTEGER in [0, limit] from *b.
func nextInt(b *[]byte, limit int64) (int64, bool) {
	v, ok := next(b, tagInt)
	if !ok {
		return 0, false
	}
	n, ok := berInt(v)
	return n, ok && n >= 0 && n <= limit
}

// messageVersion is the msgVersion of an SNMP message (0 v1, 1 v2c, 3 v3).
func messageVersion(msg []byte) (int64, bool) {
	t, body, rest, ok := tlv(msg)
	if !ok || t != tagSequence || len(rest) != 0 {
		return 0, false
	}
	return nextInt(&body, 3)
}

// v3msg is the header of an SNMPv3 message with the USM parameters.
type v3msg struct {
	msgID, maxSize int64
	flags          byte
	secModel       int64
	engineID       []byte
	boots, time    int64
	user           []byte
	authParams     []byte
	// authAt is where authParams' contents start in the message: the
	// digest is computed over the message with them zeroed.
	authAt     int
	privParams []byte
	// data is the scopedPDU's encoding (a SEQUENCE TLV), or the
	// encryptedPDU's contents when encrypted.
	data      []byte
	encrypted bool
}

// msgFlags bits (RFC 3412 6.4).
const (
	flagAuth       = 0x01
	flagPriv       = 0x02
	flagReportable = 0x04
)

// maxInt32 is the largest value of the header's INTEGER (0..2147483647).
const maxInt32 = 1<<31 - 1

// parseV3 reads an SNMPv3 message's header; false for anything that is not one.
func parseV3(msg []byte) (*v3msg, bool) {
	t, body, rest, ok := tlv(msg)
	if !ok || t != tagSequence || len(rest) != 0 {
		return nil, false
	}
	if v, ok := nextInt(&body, 3); !ok || v != 3 {
		return nil, false
	}
	m := &v3msg{}
	global, ok := next(&body, tagSequence)
	if !ok {
		return nil, false
	}
	var flags []byte
	if m.msgID, ok = nextInt(&global, maxInt32); !ok {
		return nil, false
	}
	if m.maxSize, ok = nextInt(&global, maxInt32); !ok || m.maxSize < 484 {
		return nil, false
	}
	if flags, ok = next(&global, tagOctets); !ok || len(flags) != 1 {
		return nil, false
	}
	m.flags = flags[0]
	if m.secModel, ok = nextInt(&global, maxInt32); !ok {
		return nil, false
	}
	secParams, ok := next(&body, tagOctets)
	if !ok || !m.parseUSM(msg, secParams) {
		return nil, false
	}
	t, data, rest, ok := tlv(body)
	if !ok || len(rest) != 0 {
		return nil, false
	}
	switch t {
	case tagSequence:
		m.data = body
	case tagOctets:
		m.data, m.encrypted = data, true
	default:
		return nil, false
	}
	return m, true
}

// parseUSM reads UsmSecurityParameters (RFC 3414 2.4) from b, a part of msg.
func (m *v3msg) parseUSM(msg, b []byte) bool {
	usm, ok := next(&b, tagSequence)
	if !ok || len(b) != 0 {
		return false
	}
	if m.engineID, ok = next(&usm, tagOctets); !ok {
		return false
	}
	if m.boots, ok = nextInt(&usm, maxInt32); !ok {
		return false
	}
	if m.time, ok = nextInt(&usm, maxInt32); !ok {
		return false
	}
	if m.user, ok = next(&usm, tagOctets); !ok || len(m.user) > 32 {
		return false
	}
	if m.authParams, ok = next(&usm, tagOctets); !ok {
		return false
	}
	// authParams is a subslice of msg: the capacity left after each
	// gives its offset.
	m.authAt = cap(msg) - cap(m.authParams)
	m.privParams, ok = next(&usm, tagOctets)
	return ok && len(usm) == 0
}

// requestID reads the request-id of a plaintext scopedPDU (0 if it has none).
func requestID(scoped []byte) uint32 {
	body, ok := next(&scoped, tagSequence)
	if !ok {
		return 0
	}
	if _, ok := next(&body, tagOctets); !ok { // contextEngineID
		return 0
	}
	if _, ok := next(&body, tagOctets); !ok { // contextName
		return 0
	}
	t, pdu, _, ok := tlv(body)
	if !ok || t < 0xa0 || t > 0xa8 {
		return 0
	}
	id, ok := nextInt(&pdu, maxInt32)
	if !ok {
		return 0
	}
	return uint32(id)
}
