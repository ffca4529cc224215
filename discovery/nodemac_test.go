package discovery

import (
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/hmsuite/hms/ipxe/lease"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// TestNodeNICLeftToHSM: leases of a node's NICs, which HSM names from its
// walk of the node's BMC, cause no switch walk and no unknown entry: one
// HSM already names is dropped after one look at HSM; one from a
// network-booting client (PXE) is not even queued.
func TestNodeNICLeftToHSM(t *testing.T) {
	s := newRiver(t, 1, Config{})
	ctx := t.Context()
	eis, err := s.hsm.EthernetInterfaces(ctx, url.Values{"ComponentID": {"x3000c0s1b0n0"}})
	if err != nil || len(eis) < 2 {
		t.Fatalf("node NICs after HSM's walk: %+v, %v", eis, err)
	}
	nic0, nic1 := lease.NormalizeMAC(eis[0].MACAddress), lease.NormalizeMAC(eis[1].MACAddress)
	walks := s.agent.Walks(oidQFdbPort)

	// As from a DHCP server that does not tie the MAC to a node (yet).
	s.lease(nic0, "127.0.9.1")
	if o := s.waitFor(nic0); o.err != nil || o.xname != "x3000c0s1b0n0" {
		t.Fatalf("outcome %+v (%v), want left to HSM's x3000c0s1b0n0", o, o.err)
	}
	// A PXE client's lease is ignored; nic0's second lease marks the end.
	s.leaseEvent(lease.Event{Kind: lease.Commit, MACAddress: nic1, IPAddress: "127.0.9.2",
		VendorClass: "PXEClient:Arch:00007:UNDI:003016", Arch: "x86_64"})
	s.lease(nic0, "127.0.9.3")
	if o := s.next(); o.mac != nic0 || o.err != nil {
		t.Fatalf("outcome %+v (%v), want nic0's: the PXE lease was processed", o, o.err)
	}
	// nic0's outcome means the PXE lease before it was read, and counted.
	if n := testutil.ToFloat64(s.svc.m.leases.WithLabelValues(string(lease.Commit), "netboot")); n != 1 {
		t.Errorf("%v leases counted as a node's NIC booting, want 1", n)
	}
	if n := s.agent.Walks(oidQFdbPort); n != walks {
		t.Errorf("node NIC leases walked the switch %d times", n-walks)
	}
	if u := s.svc.unknowns(true); len(u) != 0 {
		t.Errorf("unknown: %+v", u)
	}
}

// TestUnplacedMACDeferred: a MAC on no switch (a node's NIC whose BMC HSM
// has not walked yet) is deferred, not reported: not in /v1/unknown (only
// with ?deferred=true), not counted as a failure. After the grace it is
// reported; once HSM names it, it is dropped within a retry tick.
func TestUnplacedMACDeferred(t *testing.T) {
	const node = "02:00:00:00:00:09"
	agent, addr := simSwitch(t, "02:00:00:00:00:01")
	s := newSuite(t, riverLayout(addr, false, 1), nil)
	clock := newFakeClock()
	s.startService(NewSNMPWalker(SNMPConfig{}), Config{Switch: SwitchConfig{Community: "public"}, Now: clock.Now,
		RetryMin: 20 * time.Millisecond, RetryMax: time.Hour, UnplacedGrace: time.Minute})
	failures := s.svc.m.failures.WithLabelValues(ReasonNotOnSwitch)

	s.lease(node, "127.0.9.9")
	var le *locateError
	if o := s.waitFor(node); !errors.As(o.err, &le) || le.reason != ReasonNotOnSwitch {
		t.Fatalf("outcome %+v (%v), want %s", o, o.err, ReasonNotOnSwitch)
	}
	if u := s.svc.Unknowns(); len(u) != 0 {
		t.Errorf("deferred MAC listed: %+v", u)
	}
	if u := s.svc.unknowns(true); len(u) != 1 || !u[0].Deferred || u[0].Reason != ReasonNotOnSwitch {
		t.Errorf("with deferred: %+v", u)
	}
	if n := testutil.ToFloat64(failures); n != 0 {
		t.Errorf("%v failures counted while deferred", n)
	}

	clock.Add(2 * time.Minute) // past the grace: the retry reports it
	if o := s.waitFor(node); o.err == nil {
		t.Fatalf("retry: %+v, want unknown", o)
	}
	if u := s.svc.Unknowns(); len(u) != 1 || u[0].Deferred || u[0].Attempts != 2 {
		t.Errorf("after the grace: %+v, want listed, attempt 2", u)
	}
	if n := testutil.ToFloat64(failures); n != 1 {
		t.Errorf("%v failures counted, want 1", n)
	}
	if n := agent.Walks(oidQFdbPort); n != 2 {
		t.Errorf("%d walks, want 2 (the lease, the retry past the TTL)", n)
	}

	// HSM's walk of the node's BMC names it: dropped at the next tick,
	// although its retry is not due (the clock stands still).
	if err := s.hsm.CreateEthernetInterface(t.Context(), hsm.EthernetInterface{MACAddress: node, ComponentID: "x3000c0s1b0n0"}); err != nil {
		t.Fatal(err)
	}
	if o := s.waitFor(node); o.err != nil || o.xname != "x3000c0s1b0n0" {
		t.Fatalf("outcome %+v (%v), want placed by HSM under x3000c0s1b0n0", o, o.err)
	}
	if u := s.svc.unknowns(true); len(u) != 0 {
		t.Errorf("still unknown: %+v", u)
	}
	if n := agent.Walks(oidQFdbPort); n != 2 {
		t.Errorf("%d walks, want 2", n)
	}
}

// TestNetbootMACNotPolled: a MAC leased to a network-booting client is not
// queued by the HSM poll either, which finds it among the interfaces
// without a ComponentID (the DHCP server wrote it) until HSM's walk of its
// node's BMC names it.
func TestNetbootMACNotPolled(t *testing.T) {
	s := newRiver(t, 1, Config{})
	const nic, ip = "02:00:00:00:07:01", "127.0.9.7"
	s.leaseEvent(lease.Event{Kind: lease.Commit, MACAddress: nic, IPAddress: ip,
		VendorClass: "PXEClient:Arch:00007:UNDI:003016", Arch: "x86_64"})
	const marker = "02:00:00:00:07:aa" // leased after the PXE lease: its outcome means that one was read
	s.lease(marker, "127.0.9.8")
	if o := s.next(); o.mac != marker {
		t.Fatalf("outcome %+v, want the marker's", o)
	}
	if err := s.hsm.CreateEthernetInterface(t.Context(), hsm.EthernetInterface{MACAddress: nic,
		IPAddresses: []hsm.IPAddressMapping{{IPAddress: ip}}}); err != nil {
		t.Fatal(err)
	}
	walks := s.agent.Walks(oidQFdbPort)
	s.svc.pollHSM(t.Context())
	s.lease(marker, "127.0.9.9") // a new address: processed again
	if o := s.next(); o.mac != marker {
		t.Fatalf("outcome %+v (%v), want the marker's: the polled node NIC was queued", o, o.err)
	}
	if n := s.agent.Walks(oidQFdbPort); n != walks+1 {
		t.Errorf("%d walks after the poll, want 1 (the marker's)", n-walks)
	}
}
