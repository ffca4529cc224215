package discovery

import (
	"context"
	"fmt"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/ipxe/lease"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// countingHSM counts the calls the Service makes to HSM, and apart its
// listings of the RedfishEndpoints.
type countingHSM struct {
	HSM
	calls, lists atomic.Int64
}

func (c *countingHSM) RedfishEndpoints(ctx context.Context, q url.Values) ([]hsm.RedfishEndpoint, error) {
	c.calls.Add(1)
	c.lists.Add(1)
	return c.HSM.RedfishEndpoints(ctx, q)
}

func (c *countingHSM) EthernetInterfaces(ctx context.Context, q url.Values) ([]hsm.EthernetInterface, error) {
	c.calls.Add(1)
	return c.HSM.EthernetInterfaces(ctx, q)
}

func (c *countingHSM) CreateEthernetInterface(ctx context.Context, ei hsm.EthernetInterface) error {
	c.calls.Add(1)
	return c.HSM.CreateEthernetInterface(ctx, ei)
}

func (c *countingHSM) PatchEthernetInterface(ctx context.Context, id string, p hsm.EthernetPatch) (hsm.EthernetInterface, error) {
	c.calls.Add(1)
	return c.HSM.PatchEthernetInterface(ctx, id, p)
}

func (c *countingHSM) CreateRedfishEndpoints(ctx context.Context, eps ...hsm.RedfishEndpoint) error {
	c.calls.Add(1)
	return c.HSM.CreateRedfishEndpoints(ctx, eps...)
}

func (c *countingHSM) PatchRedfishEndpoint(ctx context.Context, x string, p hsm.RedfishEndpointPatch) (hsm.RedfishEndpoint, error) {
	c.calls.Add(1)
	return c.HSM.PatchRedfishEndpoint(ctx, x, p)
}

// TestLeaseEventsCoalesce: many lease events for one MAC arriving at once
// (renewals, retransmitted REQUESTs, a changed address) make one job, at
// the newest address; the others are counted as coalesced.
func TestLeaseEventsCoalesce(t *testing.T) {
	clock := newFakeClock()
	s := New(Config{Now: clock.Now}) // not Run: nothing takes the queue
	const n = 50
	mac := "02:00:00:00:aa:01"
	for i := range n {
		ip := "10.254.0.10"
		if i == n-1 {
			ip = "10.254.0.11" // the last one moved
		}
		s.Notice(t.Context(), lease.Event{Kind: lease.Commit, MACAddress: mac, IPAddress: ip})
	}
	s.mu.Lock()
	queue, j := len(s.queue), s.jobs[mac]
	s.mu.Unlock()
	if queue != 1 || j.ip != "10.254.0.11" {
		t.Errorf("%d jobs queued, job address %s; want 1 at 10.254.0.11", queue, j.ip)
	}
	if q, c := testutil.ToFloat64(s.m.leases.WithLabelValues("commit", "queued")),
		testutil.ToFloat64(s.m.leases.WithLabelValues("commit", "coalesced")); q != 1 || c != n-1 {
		t.Errorf("lease events queued %v, coalesced %v; want 1, %d", q, c, n-1)
	}

	// Taken by a worker: renewals meanwhile add nothing; a new address
	// makes one more attempt after it, however many events carry it.
	got, _ := s.next()
	for range n {
		s.Notice(t.Context(), lease.Event{Kind: lease.Commit, MACAddress: mac, IPAddress: "10.254.0.11"})
	}
	if s.again[mac] {
		t.Error("a renewal during the attempt queued another")
	}
	for range n {
		s.Notice(t.Context(), lease.Event{Kind: lease.Commit, MACAddress: mac, IPAddress: "10.254.0.12"})
	}
	s.finish(got, nil)
	if len(s.queue) != 1 || s.jobs[mac].ip != "10.254.0.12" {
		t.Errorf("after the attempt: queue %v, job %+v; want one at 10.254.0.12", s.queue, s.jobs[mac])
	}
	got, _ = s.next()
	s.finish(got, nil)
	// Done with at that address: its renewals make no work.
	s.Notice(t.Context(), lease.Event{Kind: lease.Commit, MACAddress: mac, IPAddress: "10.254.0.12"})
	if !s.Idle() || len(s.jobs) != 0 {
		t.Errorf("a renewal of a MAC done with queued %v", s.queue)
	}
}

// TestRenewalOfRegisteredBMC: once a BMC is registered, renewals of its
// lease (same MAC, same address) queue nothing, walk no switch and ask HSM
// nothing, however late they come.
func TestRenewalOfRegisteredBMC(t *testing.T) {
	xnames := []string{"x3000c0s1b0"}
	mac := redfishsim.MAC(xnames[0], "bmc:eth0")
	agent, addr := simSwitch(t, mac)
	s := newSuite(t, riverLayout(addr, false, 1), xnames)
	counted := &countingHSM{HSM: s.hsm}
	clock := newFakeClock()
	s.startService(NewSNMPWalker(SNMPConfig{}), Config{HSM: counted, Switch: SwitchConfig{Community: "public"},
		Now: clock.Now, FDBRefresh: time.Hour, SLSWatch: time.Hour, SLSRefresh: time.Hour})
	<-s.svc.Started()
	s.svc.Notice(t.Context(), lease.Event{Kind: lease.Commit, MACAddress: mac, IPAddress: s.bmcIP(0)})
	if o := s.waitFor(mac); o.err != nil || o.xname != xnames[0] {
		t.Fatalf("outcome %+v (%v), want %s registered", o, o.err, xnames[0])
	}
	walks, calls := agent.Walks(oidQFdbPort), counted.calls.Load()
	for i := range 10 {
		clock.Add(time.Minute) // renewals come later, past the table's TTL
		s.svc.Notice(t.Context(), lease.Event{Kind: lease.Commit, MACAddress: mac, IPAddress: s.bmcIP(0), Hostname: fmt.Sprint(i)})
		if !s.svc.Idle() {
			t.Fatalf("renewal %d queued work", i)
		}
	}
	if w, c := agent.Walks(oidQFdbPort), counted.calls.Load(); w != walks || c != calls {
		t.Errorf("renewals: %d more walks, %d more HSM calls; want none", w-walks, c-calls)
	}
	if c := testutil.ToFloat64(s.svc.m.leases.WithLabelValues("commit", "coalesced")); c != 10 {
		t.Errorf("coalesced lease events %v, want 10", c)
	}
}
