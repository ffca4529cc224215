package snmpsim

import (
	"testing"

	"github.com/gosnmp/gosnmp"
)

// FuzzAnswer: any datagram gets a well-formed answer or none, never a panic.
func FuzzAnswer(f *testing.F) {
	a := New("public")
	if err := a.Set(Switch{Ports: []Port{{Bridge: 1, IfIndex: 1001, Name: "ethernet1/1/1"}},
		FDB: []Entry{{MAC: "aa:00:00:00:00:01", Bridge: 1}}}); err != nil {
		f.Fatal(err)
	}
	req := &gosnmp.SnmpPacket{Version: gosnmp.Version2c, Community: "public", PDUType: gosnmp.GetBulkRequest,
		RequestID: 7, MaxRepetitions: 10, Variables: []gosnmp.SnmpPDU{{Name: ".1.3.6.1.2.1.17", Type: gosnmp.Null}}}
	b, err := req.MarshalMsg()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte{0x30, 0x03, 0x02, 0x01, 0x01})
	dec := &gosnmp.GoSNMP{Logger: gosnmp.NewLogger(nil)}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, ok := a.answer(dec, in)
		if !ok {
			return
		}
		if _, err := dec.SnmpDecodePacket(out); err != nil {
			t.Fatalf("answer does not decode: %v", err)
		}
	})
}
