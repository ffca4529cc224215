package discovery

import (
	"net"
	"testing"

	"github.com/gosnmp/gosnmp"
)

// FuzzWalkRows: whatever OIDs and values a switch answers, the table holds
// only well-formed MACs and printable port names, and nothing panics.
func FuzzWalkRows(f *testing.F) {
	f.Add("1.10.170.0.0.0.0.1", 5, []byte("ethernet1/1/1"), 1005)
	f.Add("170.0.0.0.0.1", 1, []byte{0xff, 0}, 1)
	f.Add("1.2.3", -1, []byte(""), 0)
	f.Fuzz(func(t *testing.T, idx string, port int, name []byte, ifIndex int) {
		var st WalkStats
		fdb := []gosnmp.SnmpPDU{
			{Name: "." + oidQFdbPort + "." + idx, Type: gosnmp.Integer, Value: port},
			{Name: "." + oidQFdbPort + "." + idx, Type: gosnmp.OctetString, Value: name},
		}
		rows := parseFdb(fdb, oidQFdbPort, true, &st)
		rows = append(rows, parseFdb(fdb, oidFdbPort, false, &st)...)
		base := parseIntTable([]gosnmp.SnmpPDU{{Name: oidBasePortIfIdx + "." + idx, Type: gosnmp.Integer, Value: ifIndex}}, oidBasePortIfIdx, &st)
		names := parseNames([]gosnmp.SnmpPDU{{Name: oidIfName + "." + idx, Type: gosnmp.OctetString, Value: name}}, &st)
		for mac, ports := range buildTable(rows, base, names) {
			if hw, err := net.ParseMAC(mac); err != nil || len(hw) != 6 || hw.String() != mac {
				t.Fatalf("table key %q is not a MAC", mac)
			}
			for _, p := range ports {
				if !printable([]byte(p)) {
					t.Fatalf("port name %q", p)
				}
			}
		}
	})
}
