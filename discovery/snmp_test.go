package discovery

import (
	"errors"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"
	"github.com/hmsuite/hms/internal/snmpsim"
	"github.com/hmsuite/hms/internal/snmpsim/snmpsimtest"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/problem"
)

var testPorts = []fdbPort{
	{Port: 1, IfIndex: 1001, IfName: "ethernet1/1/1", IfDescr: "GigabitEthernet1/0/1"},
	{Port: 2, IfIndex: 1002, IfName: "ethernet1/1/2", IfDescr: "GigabitEthernet1/0/2"},
	{Port: 48, IfIndex: 1048, IfName: "ethernet1/1/48", IfDescr: "TenGigabitEthernet1/1/1"},
}

// TestSNMPWalkSnmpd: the walker reads a real snmpd's Q-BRIDGE FDB over v2c
// and v3 authPriv, joins bridge ports to ifName, sees a MAC move once the
// FDB changes, and fails cleanly on a wrong community or password.
func TestSNMPWalkSnmpd(t *testing.T) {
	s := startSnmpd(t, testPorts, []fdbEntry{
		{MAC: "52:54:00:aa:00:01", Port: 1, VLAN: 10},
		{MAC: "00:25:90:fe:ed:01", Port: 48, VLAN: 1},
		{MAC: "00:25:90:fe:ed:01", Port: 48, VLAN: 4}, // one MAC on two VLANs: one port
	})
	w := NewSNMPWalker(SNMPConfig{Timeout: time.Second, Retries: 1})
	want := Table{"52:54:00:aa:00:01": {"ethernet1/1/1"}, "00:25:90:fe:ed:01": {"ethernet1/1/48"}}
	for _, tc := range []struct {
		name  string
		creds SNMPCreds
	}{
		{name: "v2c", creds: SNMPCreds{Community: "public"}},
		{name: "v3 authPriv", creds: testV3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, st, err := w.Walk(t.Context(), Switch{Xname: "x3000c0w14", Addr: s.addr, Creds: tc.creds})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("table (-want +got):\n%s", diff)
			}
			if st.Entries != 3 || st.Bad != 0 {
				t.Errorf("stats %+v", st)
			}
		})
	}
	s.setFDB(t, testPorts, []fdbEntry{{MAC: "52:54:00:aa:00:01", Port: 2, VLAN: 10}})
	got, _, err := w.Walk(t.Context(), Switch{Xname: "x3000c0w14", Addr: s.addr, Creds: testV3})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Table{"52:54:00:aa:00:01": {"ethernet1/1/2"}}, got); diff != "" {
		t.Errorf("after the move (-want +got):\n%s", diff)
	}
	quick := NewSNMPWalker(SNMPConfig{Timeout: 200 * time.Millisecond, Retries: 0})
	for _, c := range []SNMPCreds{
		{Community: "wrong"},
		{User: testV3.User, AuthProtocol: "SHA", AuthPasswd: "wrongpass1", PrivProtocol: "AES", PrivPasswd: testV3.PrivPasswd},
	} {
		_, _, err := quick.Walk(t.Context(), Switch{Xname: "x3000c0w14", Addr: s.addr, Creds: c})
		if !errors.Is(err, problem.ErrUnavailable) {
			t.Errorf("%v: err %v, want ErrUnavailable", c, err)
		}
		if err != nil && (contains([]string{err.Error()}, "wrongpass1") || len(err.Error()) == 0) {
			t.Errorf("error shows the password: %v", err)
		}
	}
}

// startSim serves sw from an in-process agent on a loopback port.
func startSim(t testing.TB, sw snmpsim.Switch) (*snmpsim.Agent, string) {
	t.Helper()
	a := snmpsim.New("public")
	return a, serveAgent(t, a, sw)
}

// serveAgent serves sw from a on a loopback port until the test ends and
// returns the port's address.
func serveAgent(t testing.TB, a *snmpsim.Agent, sw snmpsim.Switch) string {
	t.Helper()
	if err := a.Set(sw); err != nil {
		t.Fatal(err)
	}
	return snmpsimtest.ServeLoopback(t, a).String()
}

// TestSNMPWalkFallbacks: a switch without Q-BRIDGE is read through
// BRIDGE-MIB; rows that are not a MAC and a port, or names that are not
// text, are skipped and counted, never turned into a location.
func TestSNMPWalkFallbacks(t *testing.T) {
	ports := []snmpsim.Port{{Bridge: 1, IfIndex: 1001, Name: "ethernet1/1/1"}, {Bridge: 2, IfIndex: 1002, Name: "ethernet1/1/2"}}
	garbage := map[string]gosnmp.SnmpPDU{
		"1.3.6.1.2.1.17.4.3.1.2.1.2.3":             {Type: gosnmp.Integer, Value: 1},                         // short MAC
		"1.3.6.1.2.1.17.4.3.1.2.1.2.3.4.5.300":     {Type: gosnmp.Integer, Value: 1},                         // byte over 255
		"1.3.6.1.2.1.17.4.3.1.2.2.2.2.2.2.2":       {Type: gosnmp.OctetString, Value: []byte("x")},           // port not a number
		"1.3.6.1.2.1.31.1.1.1.1.1002":              {Type: gosnmp.OctetString, Value: []byte("bad\x00name")}, // not text
		"1.3.6.1.2.1.17.4.3.1.2.170.0.0.0.0.1.999": {Type: gosnmp.Integer, Value: 1},                         // too long
	}
	_, addr := startSim(t, snmpsim.Switch{Ports: ports, NoQBridge: true, Extra: garbage,
		FDB: []snmpsim.Entry{{MAC: "aa:00:00:00:00:01", Bridge: 1}, {MAC: "aa:00:00:00:00:02", Bridge: 2}, {MAC: "aa:00:00:00:00:03", Bridge: 7}}})
	got, st, err := NewSNMPWalker(SNMPConfig{}).Walk(t.Context(), Switch{Xname: "x3000c0w14", Addr: addr, Creds: SNMPCreds{Community: "public"}})
	if err != nil {
		t.Fatal(err)
	}
	want := Table{"aa:00:00:00:00:01": {"ethernet1/1/1"}, "aa:00:00:00:00:02": {"1002"}, "aa:00:00:00:00:03": {"7"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
	if st.Entries != 3 || st.Bad != 5 {
		t.Errorf("stats %+v, want 3 entries and 5 bad", st)
	}
}
