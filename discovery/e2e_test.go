package discovery

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// scns follows HSM's state-change notifications on the suite's bus.
func (s *suite) scns() <-chan hsm.SCN {
	ch := make(chan hsm.SCN, 1024)
	ctx, cancel := context.WithCancel(context.Background())
	stop := s.stop
	s.stop = func() { cancel(); stop() }
	s.run(func() error {
		return s.bus.Consume(ctx, bus.TopicSCN, "test", func(ctx context.Context, msgs []bus.Message) error {
			for _, m := range msgs {
				var scn hsm.SCN
				if json.Unmarshal(m.Value, &scn) == nil {
					ch <- scn
				}
			}
			return nil
		})
	})
	return ch
}

// waitSCN waits for an SCN naming id in state.
func (s *suite) waitSCN(ch <-chan hsm.SCN, id, state string) {
	s.t.Helper()
	timeout := time.After(time.Minute)
	for {
		select {
		case scn := <-ch:
			if scn.State == state && slices.Contains(scn.Components, id) {
				return
			}
		case <-timeout:
			s.t.Fatalf("no SCN of %s %s within a minute", id, state)
		}
	}
}

// walked waits until HSM has walked the endpoint xname. HSM tells no one
// (no SCN for new components), so this polls its DiscoveryInfo; it waits
// for HSM's worker, not for a timeout.
func (s *suite) walked(xname string) {
	s.t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	timeout := time.After(time.Minute)
	for {
		ep, err := s.hsm.RedfishEndpoint(context.Background(), xname)
		if err == nil && ep.DiscoveryInfo.LastDiscoveryStatus == "DiscoverOK" {
			return
		}
		select {
		case <-tick.C:
		case <-timeout:
			s.t.Fatalf("HSM did not walk %s within a minute: %+v, %v", xname, ep.DiscoveryInfo, err)
		}
	}
}

// waitFor reads outcomes until mac's, which it returns.
func (s *suite) waitFor(mac string) outcome {
	s.t.Helper()
	for {
		if o := s.next(); o.mac == mac {
			return o
		}
	}
}

// TestRiverEndToEnd: a lease for an unknown MAC is found on a real snmpd
// (v3 authPriv), placed through SLS, the simulated BMC gets its own password
// (the factory one stops working), and HSM registers and walks it: the node
// appears with its NID and Role from SLS. A MAC on a port SLS cables to no
// BMC stays unknown with that reason, and is placed once the FDB shows it
// on a cabled port.
func TestRiverEndToEnd(t *testing.T) {
	xnames := []string{"x3000c0s1b0", "x3000c0s2b0"}
	sw := startSnmpd(t, testPorts, nil)
	s := newSuite(t, riverLayout(sw.addr, true, 2), xnames)
	mac0, mac1 := s.bmcMAC(0), s.bmcMAC(1)
	sw.setFDB(t, testPorts, []fdbEntry{{MAC: mac0, Port: 1, VLAN: 1}, {MAC: mac1, Port: 48, VLAN: 1}})
	reg := prometheus.NewRegistry()
	s.startService(NewSNMPWalker(SNMPConfig{Timeout: 2 * time.Second, Retries: 1}), Config{RetryMin: 100 * time.Millisecond, Registerer: reg})
	ctx := t.Context()

	s.lease(mac0, s.bmcIP(0))
	if o := s.waitFor(mac0); o.err != nil || o.xname != "x3000c0s1b0" {
		t.Fatalf("outcome %+v (%v), want x3000c0s1b0 registered", o, o.err)
	}
	want := map[string]uint64{StageQueued: 1, StageSwitch: 1, StageSLS: 1, StageCredentials: 1, StageHSM: 1}
	if diff := cmp.Diff(want, stageCounts(t, reg)); diff != "" {
		t.Errorf("reds_stage_seconds samples by stage (-want +got):\n%s", diff)
	}
	e, err := s.store.Get(ctx, "x3000c0s1b0")
	if err != nil || e.State != StateRegistered || e.Password == "" || e.Pending != "" {
		t.Fatalf("stored endpoint %+v, %v", e, err)
	}
	b := s.svc.cfg.BMCs
	if err := b.Login(ctx, e.Addr, "root", e.Password); err != nil {
		t.Errorf("the new password does not log in: %v", err)
	}
	if err := b.Login(ctx, e.Addr, "root", "initial0"); !errors.Is(err, errRefused) {
		t.Errorf("factory password after the change: %v, want refused", err)
	}
	ep, err := s.hsm.RedfishEndpoint(ctx, "x3000c0s1b0")
	if err != nil || ep.IPAddress != s.bmcIP(0) || ep.MACAddr != mac0 || ep.User != "root" || !ep.RediscoverOnUpdate {
		t.Fatalf("HSM RedfishEndpoint %+v, %v", ep, err)
	}
	// HSM walks the endpoint on its own; creating components emits no SCN
	// (as in HMS), so this waits for the walk's status.
	s.walked("x3000c0s1b0")
	c, err := s.hsm.Component(ctx, "x3000c0s1b0n0")
	if err != nil || c.NID == nil || *c.NID != 1 || c.Role != "Compute" {
		t.Errorf("node after the walk: %+v, %v; want NID 1, Role Compute", c, err)
	}
	ei, err := s.hsm.EthernetInterface(ctx, ethID(mac0))
	if err != nil || ei.ComponentID != "x3000c0s1b0" {
		t.Errorf("HSM interface of %s: %+v, %v", mac0, ei, err)
	}

	// mac1 is on port 48, which SLS cables to nothing: unknown, with why.
	s.lease(mac1, s.bmcIP(1))
	o := s.waitFor(mac1)
	u := s.svc.Unknowns()
	if o.err == nil || len(u) != 1 || u[0].Reason != ReasonNoConnector || u[0].Port != "ethernet1/1/48" || u[0].Switch != "x3000c0w14" {
		t.Fatalf("outcome %+v, unknown %+v; want %s at x3000c0w14 ethernet1/1/48", o, u, ReasonNoConnector)
	}
	// The cable moves to port 2: the next retry places it.
	sw.setFDB(t, testPorts, []fdbEntry{{MAC: mac0, Port: 1, VLAN: 1}, {MAC: mac1, Port: 2, VLAN: 1}})
	for o.err != nil {
		o = s.waitFor(mac1)
	}
	if o.xname != "x3000c0s2b0" {
		t.Fatalf("after the move: %+v, want x3000c0s2b0", o)
	}
	if u := s.svc.Unknowns(); len(u) != 0 {
		t.Errorf("unknown after the move: %+v", u)
	}
}

// stageCounts returns the sample count of reds_stage_seconds by stage.
func stageCounts(t *testing.T, reg *prometheus.Registry) map[string]uint64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]uint64{}
	for _, mf := range mfs {
		if mf.GetName() != "reds_stage_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "stage" {
					out[l.GetValue()] = m.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	return out
}

// TestHSMPollFallback: without lease events (another DHCP server that only
// writes HSM), an Ethernet interface without ComponentID is placed from
// HSM's list, and the interface then names its BMC.
func TestHSMPollFallback(t *testing.T) {
	x := "x3000c0s1b0"
	mac := redfishsim.MAC(x, "bmc:eth0")
	_, addr := simSwitch(t, mac)
	s := newSuite(t, riverLayout(addr, false, 1), []string{x})
	if err := s.hsm.CreateEthernetInterface(t.Context(), hsm.EthernetInterface{MACAddress: mac,
		IPAddresses: []hsm.IPAddressMapping{{IPAddress: s.bmcIP(0)}}}); err != nil {
		t.Fatal(err)
	}
	s.startService(NewSNMPWalker(SNMPConfig{}), Config{Switch: SwitchConfig{Community: "public"}})
	if o := s.waitFor(mac); o.err != nil || o.xname != x {
		t.Fatalf("outcome %+v (%v)", o, o.err)
	}
	if ei, err := s.hsm.EthernetInterface(t.Context(), ethID(mac)); err != nil || ei.ComponentID != x {
		t.Errorf("interface %+v, %v", ei, err)
	}
}
