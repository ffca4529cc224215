package discovery

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/snmpsim"
	"github.com/hmsuite/hms/internal/snmpusm"
)

// startSimV3 serves sw from an in-process agent answering the v3 user of
// creds only (no v2c) on a loopback port.
func startSimV3(t *testing.T, sw snmpsim.Switch, creds SNMPCreds) string {
	t.Helper()
	auth, err := snmpusm.ParseAuth(creds.AuthProtocol)
	if err != nil {
		t.Fatal(err)
	}
	priv, err := snmpusm.ParsePriv(cmpOr(creds.PrivProtocol, "none"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := snmpsim.NewAgent(snmpsim.Config{Users: []snmpsim.User{{Name: creds.User, AuthProtocol: auth,
		AuthPassphrase: creds.AuthPasswd, PrivProtocol: priv, PrivPassphrase: creds.PrivPasswd}}})
	if err != nil {
		t.Fatal(err)
	}
	return serveAgent(t, a, sw)
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// TestSNMPWalkSimV3: reds' walker (gosnmp's v3 manager, as SLS's
// SNMPAuthProtocol and SNMPPrivProtocol name the protocols) walks the
// simulated switch over v3 at each protocol pair, authNoPriv included; a
// wrong user, auth key or priv key fails as ErrUnavailable, never as a table.
func TestSNMPWalkSimV3(t *testing.T) {
	ports := []snmpsim.Port{{Bridge: 1, IfIndex: 1001, Name: "ethernet1/1/1"}, {Bridge: 2, IfIndex: 1002, Name: "ethernet1/1/2"}}
	sw := snmpsim.Switch{Ports: ports, FDB: []snmpsim.Entry{{MAC: "52:54:00:aa:00:01", Bridge: 1, VLAN: 4}, {MAC: "52:54:00:aa:00:02", Bridge: 2, VLAN: 4}}}
	want := Table{"52:54:00:aa:00:01": {"ethernet1/1/1"}, "52:54:00:aa:00:02": {"ethernet1/1/2"}}
	w := NewSNMPWalker(SNMPConfig{Timeout: 2 * time.Second, Retries: 1})
	for _, pair := range [][2]string{{"SHA", ""}, {"MD5", "DES"}, {"SHA", "AES"}, {"SHA224", "AES192"}, {"SHA256", "AES"},
		{"SHA384", "AES256"}, {"SHA512", "AES256C"}, {"SHA256", "AES192C"}} {
		t.Run(pair[0]+"/"+pair[1], func(t *testing.T) {
			creds := SNMPCreds{User: "fabric", AuthProtocol: pair[0], AuthPasswd: "auth-pass-1", PrivProtocol: pair[1]}
			if pair[1] != "" {
				creds.PrivPasswd = "priv-pass-1"
			}
			addr := startSimV3(t, sw, creds)
			got, st, err := w.Walk(t.Context(), Switch{Xname: "x3000c0w14", Addr: addr, Creds: creds})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("table (-want +got):\n%s", diff)
			}
			if st.Entries != 2 || st.Bad != 0 {
				t.Errorf("stats %+v", st)
			}
		})
	}
	good := SNMPCreds{User: "fabric", AuthProtocol: "SHA256", AuthPasswd: "auth-pass-1", PrivProtocol: "AES", PrivPasswd: "priv-pass-1"}
	addr := startSimV3(t, sw, good)
	wrongUser, wrongAuth, wrongPriv := good, good, good
	wrongUser.User, wrongAuth.AuthPasswd, wrongPriv.PrivPasswd = "stranger", "not-the-pass", "not-the-pass"
	// The agent answers a wrong user, auth or priv key at once (a report
	// the manager refuses), so a long timeout costs nothing and a loaded
	// machine cannot turn the answer into a timeout. A v2c request it
	// leaves unanswered: there the timeout is what is tested.
	patient := NewSNMPWalker(SNMPConfig{Timeout: time.Minute, Retries: 0})
	quick := NewSNMPWalker(SNMPConfig{Timeout: 200 * time.Millisecond, Retries: 0})
	for _, tt := range []struct {
		name  string
		w     *SNMPWalker
		creds SNMPCreds
	}{
		{name: "wrong user", w: patient, creds: wrongUser},
		{name: "wrong auth key", w: patient, creds: wrongAuth},
		{name: "wrong priv key", w: patient, creds: wrongPriv},
		{name: "v2c, unanswered", w: quick, creds: SNMPCreds{Community: "public"}},
	} {
		if _, _, err := tt.w.Walk(t.Context(), Switch{Xname: "x3000c0w14", Addr: addr, Creds: tt.creds}); !errors.Is(err, problem.ErrUnavailable) {
			t.Errorf("%s: err %v, want ErrUnavailable", tt.name, err)
		}
	}
}
