package discovery

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/internal/sealed"
	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// TestPendingResumedAtStart: an endpoint a stopped reds left pending (its
// password set on the BMC, HSM never told) is registered when reds starts
// again, without waiting for a lease event that may never come.
func TestPendingResumedAtStart(t *testing.T) { pg.EachDB(t, testPendingResumedAtStart) }

func testPendingResumedAtStart(t *testing.T, db testpeer.DB) {
	x := "x3000c0s1b0"
	mac := redfishsim.MAC(x, "bmc:eth0")
	_, addr := simSwitch(t, mac)
	s := newSuite(t, riverLayout(addr, false, 1), []string{x})
	s.db = db(t)
	ctx := t.Context()
	if err := s.bmcClient(redfishsim.DefaultPassword).SetPassword(ctx, s.bmcs[0].Addr, "root", redfishsim.DefaultPassword, "pending-pw-123456"); err != nil {
		t.Fatal(err)
	}
	s.storeEndpoint(Endpoint{Xname: x, Kind: KindRiver, MAC: mac, IP: s.bmcIP(0), Addr: s.bmcs[0].Addr,
		User: "root", Pending: "pending-pw-123456", State: StatePending})

	s.startService(NewSNMPWalker(SNMPConfig{}), Config{Switch: SwitchConfig{Community: "public"}})
	if o := s.waitFor(mac); o.err != nil || o.xname != x {
		t.Fatalf("outcome %+v (%v), want %s registered", o, o.err, x)
	}
	if e, err := s.store.Get(ctx, x); err != nil || e.State != StateRegistered || e.Password != "pending-pw-123456" {
		t.Errorf("stored %+v, %v", e, err)
	}
	if _, err := s.hsm.RedfishEndpoint(ctx, x); err != nil {
		t.Errorf("RedfishEndpoint: %v", err)
	}
}

// storeEndpoint stores e in the suite's reds database before the service
// starts, as an earlier run of reds left it.
func (s *suite) storeEndpoint(e Endpoint) {
	t := s.t
	t.Helper()
	box, err := sealed.LoadKey(filepath.Join(s.dir, "reds.key"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := OpenStore(s.ctx, s.db, box, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Put(s.ctx, e); err != nil {
		t.Fatal(err)
	}
}

// countRetires counts the first step of each attempt to retire a BMC (the
// RedfishEndpoint PATCH that disables it).
type countRetires struct {
	HSM
	n atomic.Int64
}

func (c *countRetires) PatchRedfishEndpoint(ctx context.Context, x string, p hsm.RedfishEndpointPatch) (hsm.RedfishEndpoint, error) {
	if p.Enabled != nil && !*p.Enabled {
		c.n.Add(1)
	}
	return c.HSM.PatchRedfishEndpoint(ctx, x, p)
}

// TestRemovalWaitsForHSM: BMCs gone and deleted from SLS while HSM is
// down (one registered, one left pending: HSM committed its endpoint but
// reds never heard back) are not forgotten. The removal is stored, retried
// with a doubling backoff while HSM is down, taken up again by a restarted
// reds, and done once HSM is back: both BMCs and their nodes Empty.
func TestRemovalWaitsForHSM(t *testing.T) {
	clock := newFakeClock()
	s := newRiverSuite(t, 2)
	h := &countRetires{HSM: s.hsm}
	// Every attempt's outcome, once recorded: the restarted reds retries at
	// once on its own, alongside the test's own calls, and the test waits
	// for those attempts to end rather than assume its call made them.
	tried := make(chan string, 64)
	// RetryMin is an hour of the fake clock, and of the real one: only
	// the test's calls, and a restarted reds' first round, retry.
	s.registerAll(Config{Now: clock.Now, RetryMin: time.Hour, RetryMax: 8 * time.Hour, HSM: h,
		Retired: func(x string, _ error) { tried <- x }})
	ctx := t.Context()
	if err := s.store.SetState(ctx, "x3000c0s2b0", StatePending); err != nil {
		t.Fatal(err)
	}
	scns := s.scns()
	for _, m := range s.bmcs {
		if err := m.BMC.SetFaults(redfishsim.Faults{ErrorPaths: []string{"/redfish/v1"}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, x := range []string{"x3000c0s1b0", "x3000c0s2b0"} {
		if err := s.sls.DeleteHardware(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	s.stopHSM()

	var ended int64 // attempts seen to end
	step := func(name string, advance time.Duration, wantAttempts int64, wantState string) {
		t.Helper()
		clock.Add(advance)
		s.svc.RetryRemovals(ctx)
		for ; ended < wantAttempts; ended++ {
			select {
			case <-tried:
			case <-time.After(time.Minute): // a guard against a hang, not a timing
				t.Fatalf("%s: %d attempts ended, want %d", name, ended, wantAttempts)
			}
		}
		if n := h.n.Load(); n != wantAttempts {
			t.Errorf("%s: %d attempts, want %d", name, n, wantAttempts)
		}
		for _, x := range []string{"x3000c0s1b0", "x3000c0s2b0"} {
			if e, err := s.store.Get(ctx, x); err != nil || e.State != wantState {
				t.Errorf("%s: %s stored as %q, %v; want %q", name, x, e.State, err, wantState)
			}
		}
	}
	s.svc.CheckPresence(ctx)
	step("HSM down", 0, 2, StateRemoving)
	step("before the backoff", 59*time.Minute, 2, StateRemoving)
	step("after 1 h", time.Minute, 4, StateRemoving)
	step("backoff doubled", time.Hour, 4, StateRemoving)

	s.restartService()
	<-s.svc.Started()
	// Tried once each, by the restarted reds' own first round or by the
	// test's call, whichever claims it first; never twice.
	step("reds restarted", 0, 6, StateRemoving)

	s.startHSM()
	step("HSM back", time.Hour, 8, StateRemoved)
	s.waitSCN(scns, "x3000c0s1b0n0", hsm.StateEmpty)
	for _, id := range []string{"x3000c0s1b0", "x3000c0s1b0n0", "x3000c0s2b0", "x3000c0s2b0n0"} {
		if c, err := s.hsm.Component(ctx, id); err != nil || c.State != hsm.StateEmpty {
			t.Errorf("%s: %+v, %v; want Empty", id, c, err)
		}
	}
	for _, x := range []string{"x3000c0s1b0", "x3000c0s2b0"} {
		if ep, err := s.hsm.RedfishEndpoint(ctx, x); err != nil || ep.Enabled == nil || *ep.Enabled {
			t.Errorf("endpoint %s: %+v, %v; want disabled", x, ep, err)
		}
	}
}

// TestRemovalYieldsToRegistration: a removal waiting for HSM is dropped,
// and HSM never told, once the BMC is registered again meanwhile (its
// stored state no longer removing): the registration stands.
func TestRemovalYieldsToRegistration(t *testing.T) {
	clock := newFakeClock()
	s := newRiverSuite(t, 1)
	h := &countRetires{HSM: s.hsm}
	s.registerAll(Config{Now: clock.Now, RetryMin: time.Hour, RetryMax: 8 * time.Hour, HSM: h})
	ctx := t.Context()
	x := "x3000c0s1b0"
	if err := s.bmcs[0].BMC.SetFaults(redfishsim.Faults{ErrorPaths: []string{"/redfish/v1"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.sls.DeleteHardware(ctx, x); err != nil {
		t.Fatal(err)
	}
	s.stopHSM()
	s.svc.CheckPresence(ctx)
	if e, err := s.store.Get(ctx, x); err != nil || e.State != StateRemoving || h.n.Load() != 1 {
		t.Fatalf("HSM down: %q (%v), %d attempts; want removing after 1", e.State, err, h.n.Load())
	}
	if err := s.store.SetState(ctx, x, StateRegistered); err != nil { // registered anew
		t.Fatal(err)
	}
	s.startHSM()
	clock.Add(time.Hour)
	s.svc.RetryRemovals(ctx)
	if e, err := s.store.Get(ctx, x); err != nil || e.State != StateRegistered || h.n.Load() != 1 {
		t.Errorf("after the retry: %q (%v), %d attempts; want registered, no new attempt", e.State, err, h.n.Load())
	}
	if ep, err := s.hsm.RedfishEndpoint(ctx, x); err != nil || ep.Enabled != nil && !*ep.Enabled {
		t.Errorf("endpoint %s: %+v, %v; want it left enabled", x, ep, err)
	}
}
