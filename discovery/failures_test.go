package discovery

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/internal/snmpsim"
	"github.com/hmsuite/hms/layout/sls"
)

// TestUnknownReasons: each way a MAC can fail leaves it unknown with its
// reason, counted, and never registers an xname.
func TestUnknownReasons(t *testing.T) {
	xnames := []string{"x3000c0s1b0", "x3000c0s2b0"}
	mac := redfishsim.MAC(xnames[0], "bmc:eth0")
	ports := []snmpsim.Port{{Bridge: 1, IfIndex: 1001, Name: "ethernet1/1/1"}, {Bridge: 2, IfIndex: 1002, Name: "ethernet1/1/2"}}
	tests := []struct {
		name      string
		fdb       []snmpsim.Entry
		community string
		password  string // factory password reds tries
		want      string
	}{
		{name: "not on a switch", fdb: []snmpsim.Entry{{MAC: "02:00:00:00:00:09", Bridge: 1}}, want: ReasonNotOnSwitch},
		{name: "two cabled ports", fdb: []snmpsim.Entry{{MAC: mac, Bridge: 1, VLAN: 1}, {MAC: mac, Bridge: 2, VLAN: 2}}, want: ReasonTwoPorts},
		{name: "wrong community", fdb: []snmpsim.Entry{{MAC: mac, Bridge: 1}}, community: "wrong", want: ReasonSNMP},
		{name: "factory password refused", fdb: []snmpsim.Entry{{MAC: mac, Bridge: 1}}, password: "not-initial0", want: ReasonBMC},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, addr := startSim(t, snmpsim.Switch{Ports: ports, FDB: tt.fdb})
			s := newSuite(t, riverLayout(addr, false, 2), xnames)
			// A MAC on no switch is reported at once, not deferred.
			cfg := Config{Switch: SwitchConfig{Community: "public"}, UnplacedGrace: -1}
			if tt.community != "" {
				cfg.Switch.Community = tt.community
			}
			if tt.password != "" {
				cfg.BMCs = s.bmcClient(tt.password)
			}
			s.startService(NewSNMPWalker(SNMPConfig{Timeout: 200 * time.Millisecond, Retries: 0}), cfg)
			s.lease(mac, s.bmcIP(0))
			o := s.waitFor(mac)
			u := s.svc.Unknowns()
			if o.err == nil || len(u) != 1 || u[0].Reason != tt.want || u[0].Attempts != 1 || !u[0].NextAttempt.After(u[0].LastAttempt) {
				t.Fatalf("outcome %+v (%v), unknown %+v; want reason %s", o, o.err, u, tt.want)
			}
			if _, err := s.hsm.RedfishEndpoint(t.Context(), xnames[0]); err == nil {
				t.Error("a RedfishEndpoint was registered")
			}
			if tt.password != "" {
				// The BMC kept its factory password.
				if err := s.bmcClient("").Login(t.Context(), s.bmcs[0].Addr, "root", redfishsim.DefaultPassword); err != nil {
					t.Errorf("factory login after a refused change: %v", err)
				}
			}
			// A renewal of the same lease does not cut the backoff short.
			s.lease(mac, s.bmcIP(0))
			s.lease("02:00:00:00:00:aa", s.bmcIP(1)) // a marker: its outcome comes next
			if o := s.next(); o.mac != "02:00:00:00:00:aa" {
				t.Errorf("the renewal was processed again: %+v", o)
			}
		})
	}
}

// TestPendingCredentials: a password set on the BMC but not yet registered
// (reds stopped in between) is found in the store and used; the BMC is not
// locked out.
func TestPendingCredentials(t *testing.T) {
	x := "x3000c0s1b0"
	mac := redfishsim.MAC(x, "bmc:eth0")
	_, addr := simSwitch(t, mac)
	s := newSuite(t, riverLayout(addr, false, 1), []string{x})
	b := s.bmcClient(redfishsim.DefaultPassword)
	if err := b.SetPassword(t.Context(), s.bmcs[0].Addr, "root", redfishsim.DefaultPassword, "pending-pw-123456"); err != nil {
		t.Fatal(err)
	}
	s.startService(NewSNMPWalker(SNMPConfig{}), Config{Switch: SwitchConfig{Community: "public"}})
	// As a crashed run left it: pending stored, nothing in HSM.
	if err := s.store.Put(t.Context(), Endpoint{Xname: x, Kind: KindRiver, MAC: mac, IP: s.bmcIP(0), Addr: s.bmcs[0].Addr,
		User: "root", Pending: "pending-pw-123456", State: StatePending}); err != nil {
		t.Fatal(err)
	}
	s.lease(mac, s.bmcIP(0))
	if o := s.waitFor(mac); o.err != nil || o.xname != x {
		t.Fatalf("outcome %+v (%v)", o, o.err)
	}
	e, err := s.store.Get(t.Context(), x)
	if err != nil || e.Password != "pending-pw-123456" || e.Pending != "" || e.State != StateRegistered {
		t.Fatalf("stored %+v, %v", e, err)
	}
	if _, err := s.hsm.RedfishEndpoint(t.Context(), x); err != nil {
		t.Fatal(err)
	}
}

// TestSwitchAddedToSLS: a BMC on a switch SLS does not list yet stays
// unknown; once the switch is added to SLS, reds sees SLS's version move,
// re-reads the switches and registers the BMC on a retry, without waiting
// for the periodic re-read (an hour here).
func TestSwitchAddedToSLS(t *testing.T) {
	xnames := []string{"x3000c0s1b0"}
	mac := redfishsim.MAC(xnames[0], "bmc:eth0")
	_, addr := startSim(t, snmpsim.Switch{Ports: []snmpsim.Port{{Bridge: 1, IfIndex: 1001, Name: "ethernet1/1/1"}},
		FDB: []snmpsim.Entry{{MAC: mac, Bridge: 1}}})
	hw := riverLayout(addr, false, 1)
	sw := hw["x3000c0w14"]
	delete(hw, "x3000c0w14")
	s := newSuite(t, hw, xnames)
	s.startService(NewSNMPWalker(SNMPConfig{Timeout: 200 * time.Millisecond, Retries: 0}), Config{
		Switch: SwitchConfig{Community: "public"}, SLSRefresh: time.Hour, SLSWatch: 20 * time.Millisecond,
		RetryMin: 50 * time.Millisecond, RetryMax: time.Hour})
	<-s.svc.Started()
	s.lease(mac, s.bmcIP(0))
	if o := s.waitFor(mac); o.err == nil || !strings.Contains(o.err.Error(), ReasonNotOnSwitch) {
		t.Fatalf("before the switch is in SLS: %+v, want %s", o, ReasonNotOnSwitch)
	}
	b, _ := json.Marshal(sw)
	var h sls.Hardware
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatal(err)
	}
	if _, err := s.sls.CreateHardware(t.Context(), h); err != nil {
		t.Fatal(err)
	}
	for {
		o := s.waitFor(mac)
		if o.err == nil {
			if o.xname != xnames[0] {
				t.Fatalf("registered as %s, want %s", o.xname, xnames[0])
			}
			return
		}
		if !strings.Contains(o.err.Error(), ReasonNotOnSwitch) {
			t.Fatalf("after the switch was added: %v", o.err)
		}
	}
}
