package discovery

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/redfishsim"
	slsclient "github.com/hmsuite/hms/layout/client"
	"github.com/hmsuite/hms/layout/sls"
)

// TestMountainEndpoints: the expected BMCs of a chassis and their MACs, as
// hms-meds derives them.
func TestMountainEndpoints(t *testing.T) {
	eps := MountainEndpoints("", 1000, 3)
	if len(eps) != 1+mtnSlots*mtnNodeCards+mtnRouterSlots {
		t.Fatalf("%d endpoints", len(eps))
	}
	byX := map[string]string{}
	for _, e := range eps {
		byX[e.Xname] = e.MAC
	}
	want := map[string]string{
		"x1000c3b0":   "02:03:e8:03:00:00",
		"x1000c3s0b0": "02:03:e8:03:30:00",
		"x1000c3s7b1": "02:03:e8:03:37:10",
		"x1000c3r0b0": "02:03:e8:03:60:00",
		"x1000c3r7b0": "02:03:e8:03:67:00",
	}
	for x, mac := range want {
		if byX[x] != mac {
			t.Errorf("%s: MAC %q, want %q", x, byX[x], mac)
		}
	}
	if got := MountainEndpoints("0e", 9000, 0)[0].MAC; got != "0e:23:28:00:00:00" {
		t.Errorf("prefix 0e, cabinet 9000: %s", got)
	}
}

// TestMountain: MEDS pre-registers every expected BMC of a Mountain chassis
// in SLS as an HSM Ethernet interface, and the ones that get an address
// get their own password and NTP/syslog settings and are registered.
func TestMountain(t *testing.T) {
	present := []string{"x1000c0b0", "x1000c0s0b0"}
	hw := map[string]any{
		"x1000": map[string]any{"Xname": "x1000", "Class": "Mountain",
			"ExtraProperties": map[string]any{"Networks": map[string]any{"cn": map[string]any{"HMN": map[string]any{"MACPrefix": "02"}}}}},
		"x1000c0":       map[string]any{"Xname": "x1000c0", "Class": "Mountain"},
		"x1000c0s0b0n0": map[string]any{"Xname": "x1000c0s0b0n0", "Class": "Mountain", "ExtraProperties": map[string]any{"NID": 1000, "Role": "Compute"}},
	}
	s := newSuite(t, hw, present)
	s.startService(nil, Config{River: false, Mountain: true, NTP: []string{"10.1.0.1"}, Syslog: "10.1.0.2:514"})
	ctx := t.Context()
	<-s.svc.Started()
	eis, err := s.hsm.EthernetInterfaces(ctx, nil)
	if err != nil || len(eis) != 25 {
		t.Fatalf("%d HSM interfaces (%v), want 25", len(eis), err)
	}
	macs := map[string]string{}
	for _, e := range MountainEndpoints("02", 1000, 0) {
		macs[e.Xname] = e.MAC
	}
	for _, ei := range eis {
		if macs[ei.ComponentID] != ei.MACAddress {
			t.Errorf("interface %s names %s", ei.MACAddress, ei.ComponentID)
		}
	}
	for i, x := range present {
		s.lease(macs[x], s.bmcIP(i))
	}
	for range present {
		if o := s.next(); o.err != nil {
			t.Fatalf("outcome %+v (%v)", o, o.err)
		}
	}
	for i, x := range present {
		e, err := s.store.Get(ctx, x)
		if err != nil || e.Kind != KindMountain || e.State != StateRegistered {
			t.Fatalf("%s stored %+v, %v", x, e, err)
		}
		if _, err := s.hsm.RedfishEndpoint(ctx, x); err != nil {
			t.Errorf("%s not registered: %v", x, err)
		}
		np := s.getRedfish(i, "/redfish/v1/Managers/BMC/NetworkProtocol", e.Password)
		var got struct {
			NTP struct{ NTPServers []string }
			Oem struct{ Syslog struct{ Target string } }
		}
		if err := json.Unmarshal(np, &got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"10.1.0.1"}, got.NTP.NTPServers); diff != "" || got.Oem.Syslog.Target != "10.1.0.2:514" {
			t.Errorf("%s NetworkProtocol: %s", x, np)
		}
	}
	s.walked("x1000c0s0b0")
}

// getRedfish reads path from simulated BMC i as root with password.
func (s *suite) getRedfish(i int, path, password string) []byte {
	s.t.Helper()
	req, _ := http.NewRequestWithContext(s.t.Context(), "GET", s.bmcs[i].URL+path, nil)
	req.SetBasicAuth("root", password)
	resp, err := s.svc.cfg.BMCs.hc.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		s.t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	return b
}

// TestMountainLeasedBeforeChassis: a Mountain BMC leased before MEDS has
// read its chassis from SLS is tried as a River BMC and left unknown (on no
// switch); once the chassis is in SLS, its next lease (a renewal at the same
// address) is a Mountain job at once, not a River retry after the backoff.
func TestMountainLeasedBeforeChassis(t *testing.T) {
	const x = "x1000c0s0b0"
	_, addr := simSwitch(t) // a switch the BMC is not on
	s := newSuite(t, riverLayout(addr, false, 0), []string{x})
	s.startService(NewSNMPWalker(SNMPConfig{}), Config{Switch: SwitchConfig{Community: "public"}, RetryMin: time.Hour})
	ctx := t.Context()
	<-s.svc.Started()
	mac := ""
	for _, e := range MountainEndpoints("", 1000, 0) {
		if e.Xname == x {
			mac = e.MAC
		}
	}
	s.lease(mac, s.bmcIP(0))
	if o := s.next(); o.err == nil {
		t.Fatalf("leased before its chassis is in SLS: %+v, want unknown", o)
	}
	for _, h := range []sls.Hardware{{Xname: "x1000", Class: sls.Mountain}, {Xname: "x1000c0", Class: sls.Mountain}} {
		if _, err := s.sls.PutHardware(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.svc.refreshMountain(ctx); err != nil {
		t.Fatal(err)
	}
	s.lease(mac, s.bmcIP(0))
	// The SLS change may also retry the River job once (an outcome that
	// fails again); the Mountain one follows.
	for range 3 {
		if o := s.next(); o.err == nil {
			if o.xname != x {
				t.Fatalf("registered %q, want %s", o.xname, x)
			}
			return
		}
	}
	t.Fatalf("%s not registered after the renewal", x)
}

// TestMountainOnlyInCabinetNetwork: a lease of a Mountain BMC's MAC (which
// anyone can compute from SLS) at an address outside its cabinet's HMN as
// SLS gives it is not logged in to: bmc_refused, nothing stored, nothing
// registered. In a cabinet whose HMN holds the address, or that SLS gives
// none, it is registered.
func TestMountainOnlyInCabinetNetwork(t *testing.T) {
	cabinet := func(x, cidr string) map[string]any {
		hmn := map[string]any{"MACPrefix": "02"}
		if cidr != "" {
			hmn["CIDR"] = cidr
		}
		return map[string]any{"Xname": x, "Class": "Mountain",
			"ExtraProperties": map[string]any{"Networks": map[string]any{"cn": map[string]any{"HMN": hmn}}}}
	}
	present := []string{"x1000c0s0b0", "x1001c0s0b0", "x1002c0s0b0"} // on 127.77.*
	hw := map[string]any{
		"x1000": cabinet("x1000", "10.104.0.0/22"), "x1001": cabinet("x1001", "127.0.0.0/8"), "x1002": cabinet("x1002", ""),
	}
	for _, x := range present {
		hw[x[:7]] = map[string]any{"Xname": x[:7], "Class": "Mountain"}
	}
	s := newSuite(t, hw, present)
	s.startService(nil, Config{River: false, Mountain: true})
	ctx := t.Context()
	<-s.svc.Started()
	byMAC := map[string]string{}
	for i, x := range present {
		cab, _ := strconv.Atoi(x[1:5])
		mac := MountainEndpoints("02", cab, 0)[1].MAC
		byMAC[mac] = x
		s.lease(mac, s.bmcIP(i))
	}
	got := map[string]string{}
	for range present {
		o := s.next()
		switch {
		case o.err == nil:
			got[byMAC[o.mac]] = "registered"
		case errors.Is(o.err, errOutsideNetwork) && reasonOf(o.err) == ReasonBMC:
			got[byMAC[o.mac]] = "refused"
		default:
			t.Errorf("outcome %+v (%v)", o, o.err)
		}
	}
	want := map[string]string{"x1000c0s0b0": "refused", "x1001c0s0b0": "registered", "x1002c0s0b0": "registered"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	if e, err := s.store.Get(ctx, "x1000c0s0b0"); !errors.Is(err, problem.ErrNotFound) {
		t.Errorf("refused BMC stored: %+v, %v", e, err)
	}
	if _, err := s.hsm.RedfishEndpoint(ctx, "x1000c0s0b0"); !errors.Is(err, problem.ErrNotFound) {
		t.Errorf("refused BMC's RedfishEndpoint: %v, want none", err)
	}
}

// downSLS fails every hardware read while down is set, as an SLS that
// does not answer; its /version is the real one.
type downSLS struct {
	*slsclient.Client
	down atomic.Bool
}

func (d *downSLS) SearchHardware(ctx context.Context, q sls.HardwareSearch) ([]sls.Hardware, error) {
	if d.down.Load() {
		return nil, problem.Unavailablef("sls: down")
	}
	return d.Client.SearchHardware(ctx, q)
}

// TestMountainResumedChecksCabinetNetwork: a Mountain endpoint left
// pending at an address outside its cabinet's HMN (stored by an earlier
// run) is resumed when reds starts, while SLS does not answer. It is not
// logged in to without the check: the attempt fails for want of SLS, and
// once SLS is read it is refused as outside the cabinet's HMN; nothing is
// registered, though its stored password would log in.
func TestMountainResumedChecksCabinetNetwork(t *testing.T) {
	const x = "x1000c0s0b0"
	hw := map[string]any{
		"x1000": map[string]any{"Xname": "x1000", "Class": "Mountain", "ExtraProperties": map[string]any{"Networks": map[string]any{
			"cn": map[string]any{"HMN": map[string]any{"MACPrefix": "02", "CIDR": "10.104.0.0/22"}}}}},
		"x1000c0": map[string]any{"Xname": "x1000c0", "Class": "Mountain"},
	}
	s := newSuite(t, hw, []string{x})
	ctx := t.Context()
	const pw = "pending-pw-0123456789"
	if err := s.bmcClient(redfishsim.DefaultPassword).SetPassword(ctx, s.bmcs[0].Addr, "root", redfishsim.DefaultPassword, pw); err != nil {
		t.Fatal(err)
	}
	mac := MountainEndpoints("02", 1000, 0)[1].MAC
	s.storeEndpoint(Endpoint{Xname: x, Kind: KindMountain, MAC: mac, IP: s.bmcIP(0), Addr: s.bmcs[0].Addr,
		User: "root", Pending: pw, State: StatePending})

	lay := &downSLS{Client: s.sls}
	lay.down.Store(true)
	s.startService(nil, Config{River: false, Mountain: true, SLS: lay, RetryMin: time.Hour})
	o := s.next()
	if o.err == nil || reasonOf(o.err) != ReasonSLS {
		t.Fatalf("resumed before SLS was read: %+v (%v), want %s", o, o.err, ReasonSLS)
	}
	lay.down.Store(false)
	s.svc.watchSLS(ctx) // SLS answers: read, and the MAC's retry brought forward
	s.svc.requeueDue()
	if o := s.next(); !errors.Is(o.err, errOutsideNetwork) || reasonOf(o.err) != ReasonBMC {
		t.Fatalf("resumed once SLS was read: %+v (%v), want refused outside the cabinet's HMN", o, o.err)
	}
	if got, err := s.store.Get(ctx, x); err != nil || got.State != StatePending {
		t.Errorf("stored %q, %v; want still pending", got.State, err)
	}
	if _, err := s.hsm.RedfishEndpoint(ctx, x); !errors.Is(err, problem.ErrNotFound) {
		t.Errorf("RedfishEndpoint of %s: %v, want none", x, err)
	}
}
