package snmpsim

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha1"
	"testing"

	"github.com/gosnmp/gosnmp"
)

// FuzzAnswer: any datagram, v2c or v3 (discovery, authNoPriv, authPriv,
// good and bad keys), gets a well-formed answer or none, never a panic.
func FuzzAnswer(f *testing.F) {
	users := []User{
		{Name: "fabric", AuthProtocol: gosnmp.SHA, AuthPassphrase: "auth-pass-1", PrivProtocol: gosnmp.AES, PrivPassphrase: "priv-pass-1"},
		{Name: "old", AuthProtocol: gosnmp.MD5, AuthPassphrase: "auth-pass-1", PrivProtocol: gosnmp.DES, PrivPassphrase: "priv-pass-1"},
		{Name: "monitor", AuthProtocol: gosnmp.SHA256, AuthPassphrase: "auth-pass-1"},
	}
	a := newTestAgent(f, Config{Community: "public", Users: users, EngineID: testEngineID, Now: newClock().Now})
	req := &gosnmp.SnmpPacket{Version: gosnmp.Version2c, Community: "public", PDUType: gosnmp.GetBulkRequest,
		RequestID: 7, MaxRepetitions: 10, Variables: []gosnmp.SnmpPDU{{Name: ".1.3.6.1.2.1.17", Type: gosnmp.Null}}}
	b, err := req.MarshalMsg()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte{0x30, 0x03, 0x02, 0x01, 0x01})
	f.Add(probe(f, gosnmp.Reportable))
	for _, u := range users {
		f.Add(encode(f, u, gosnmp.AuthNoPriv, testEngineID, 1, 0))
		if u.PrivProtocol == 0 {
			continue
		}
		f.Add(encode(f, u, gosnmp.AuthPriv, testEngineID, 1, 0))
		bad := u
		bad.PrivPassphrase = "not-the-pass"
		f.Add(encode(f, bad, gosnmp.AuthPriv, testEngineID, 1, 0))
	}
	dec := &gosnmp.GoSNMP{Logger: gosnmp.NewLogger(nil)}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, ok := a.answer(in)
		if !ok {
			return
		}
		if v, _ := messageVersion(out); v == int64(gosnmp.Version3) {
			if _, ok := parseV3(out); !ok {
				t.Fatalf("v3 answer does not parse: %x", out)
			}
			return
		}
		if _, err := dec.SnmpDecodePacket(out); err != nil {
			t.Fatalf("answer does not decode: %v", err)
		}
	})
}

// FuzzAnswerAuthenticated: a message that passes every USM check (right
// engine, user, MAC and time) but whose scopedPDU, plaintext or after
// decryption, is anything gets a well-formed answer or none, never a panic:
// the bytes gosnmp's decoder sees only once the MAC is right.
func FuzzAnswerAuthenticated(f *testing.F) {
	u := User{Name: "fabric", AuthProtocol: gosnmp.SHA, AuthPassphrase: "auth-pass-1", PrivProtocol: gosnmp.AES, PrivPassphrase: "priv-pass-1"}
	a := newTestAgent(f, Config{Users: []User{u}, EngineID: testEngineID, Now: newClock().Now})
	good, _ := parseV3(encode(f, u, gosnmp.AuthNoPriv, testEngineID, 1, 0))
	f.Add(good.data, false)
	f.Add(good.data, true)
	f.Add([]byte{0x30, 0x00}, true)
	f.Add([]byte{0x30, 0x06, 0x04, 0x00, 0x04, 0x00, 0xa5, 0x00}, false)
	lu := a.v3.users[u.Name]
	for _, priv := range []bool{false, true} { // the messages built pass the checks
		out, ok := a.answer(authenticated(f, lu, good.data, priv))
		if m, _ := parseV3(out); !ok || m == nil || m.flags&flagPriv != 0 != priv || a.Requests() == 0 {
			f.Fatalf("a good message built with priv %v got no response: %x", priv, out)
		}
	}
	f.Fuzz(func(t *testing.T, scoped []byte, priv bool) {
		if len(scoped) > 60000 {
			t.Skip("over what one datagram carries")
		}
		msg := authenticated(t, lu, scoped, priv)
		if _, ok := parseV3(msg); !ok {
			t.Fatalf("test message does not parse: %x", msg)
		}
		out, ok := a.answer(msg)
		if ok {
			if _, ok := parseV3(out); !ok {
				t.Fatalf("answer does not parse: %x", out)
			}
		}
	})
}

// authenticated builds a v3 message from u to testEngineID (boots 1, time
// 0) carrying scoped, encrypted with AES when priv, with its MAC.
func authenticated(t testing.TB, u *usmUser, scoped []byte, priv bool) []byte {
	t.Helper()
	flags, salt, data := byte(flagAuth|flagReportable), []byte{}, scoped
	if priv {
		flags |= flagPriv
		salt = []byte{1, 2, 3, 4, 5, 6, 7, 8}
		iv := append([]byte{0, 0, 0, 1, 0, 0, 0, 0}, salt...)
		block, err := aes.NewCipher(u.privKey)
		if err != nil {
			t.Fatal(err)
		}
		data = make([]byte, len(scoped))
		cipher.NewCFBEncrypter(block, iv).XORKeyStream(data, scoped) //nolint:staticcheck // RFC 3826 is CFB
		data = ber(tagOctets, data)
	} else if tag, _, rest, ok := tlv(scoped); !ok || tag != tagSequence || len(rest) != 0 {
		data = ber(tagSequence, scoped) // a plaintext scopedPDU is one SEQUENCE
	}
	usm := ber(tagSequence, ber(tagOctets, testEngineID), ber(tagInt, []byte{1}), ber(tagInt, []byte{0}),
		ber(tagOctets, []byte(u.Name)), ber(tagOctets, make([]byte, 12)), ber(tagOctets, salt))
	msg := ber(tagSequence, ber(tagInt, []byte{3}),
		ber(tagSequence, ber(tagInt, []byte{42}), ber(tagInt, []byte{0x00, 0xff, 0xe3}), ber(tagOctets, []byte{flags}), ber(tagInt, []byte{3})),
		ber(tagOctets, usm), data)
	m, ok := parseV3(msg)
	if !ok {
		t.Fatalf("test message does not parse: %x", msg)
	}
	mac := hmac.New(sha1.New, u.authKey)
	mac.Write(msg)
	copy(msg[m.authAt:], mac.Sum(nil)[:12])
	return msg
}

// ber encodes one TLV (definite length, long form from 128 bytes).
func ber(tag byte, parts ...[]byte) []byte {
	body := bytes.Join(parts, nil)
	n := len(body)
	out := []byte{tag}
	switch {
	case n < 0x80:
		out = append(out, byte(n))
	case n < 0x100:
		out = append(out, 0x81, byte(n))
	default:
		out = append(out, 0x82, byte(n>>8), byte(n))
	}
	return append(out, body...)
}
