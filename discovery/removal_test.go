package discovery

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// newRiver starts a suite with n simulated BMCs x3000c0s<i+1>b0 cabled to
// an in-process switch, runs the service (cfg), leases every BMC and waits
// until HSM has walked them all.
func newRiver(t *testing.T, n int, cfg Config) *suite {
	t.Helper()
	s := newRiverSuite(t, n)
	s.registerAll(cfg)
	return s
}

// newRiverSuite starts a suite with n simulated BMCs x3000c0s<i+1>b0
// cabled to an in-process switch (s.agent); no service yet.
func newRiverSuite(t *testing.T, n int) *suite {
	t.Helper()
	xnames, macs := make([]string, n), make([]string, n)
	for i := range n {
		xnames[i] = fmt.Sprintf("x3000c0s%db0", i+1)
		macs[i] = redfishsim.MAC(xnames[i], "bmc:eth0")
	}
	agent, addr := simSwitch(t, macs...)
	s := newSuite(t, riverLayout(addr, false, n), xnames)
	s.agent = agent
	return s
}

// registerAll runs the service (cfg), leases every BMC and waits until HSM
// has walked them all.
func (s *suite) registerAll(cfg Config) {
	t := s.t
	t.Helper()
	cfg.Switch.Community = "public"
	s.startService(NewSNMPWalker(SNMPConfig{}), cfg)
	for i := range s.bmcs {
		s.lease(s.bmcMAC(i), s.bmcIP(i))
	}
	for range s.bmcs {
		if o := s.next(); o.err != nil {
			t.Fatalf("registration: %+v (%v)", o, o.err)
		}
	}
	for _, m := range s.bmcs {
		s.walked(m.BMC.Xname())
	}
}

// TestRemoval: a registered BMC that stops answering and is gone from SLS
// is retired (RedfishEndpoint disabled, it and its node Empty in HSM, SCNs
// sent); one still in SLS is only flagged Alert, and back to OK when it
// answers again.
func TestRemoval(t *testing.T) {
	s := newRiver(t, 2, Config{})
	scns := s.scns()
	ctx := t.Context()
	down := redfishsim.Faults{ErrorPaths: []string{"/redfish/v1"}}
	for _, m := range s.bmcs {
		if err := m.BMC.SetFaults(down); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.sls.DeleteHardware(ctx, "x3000c0s1b0"); err != nil {
		t.Fatal(err)
	}
	s.svc.CheckPresence(ctx)

	s.waitSCN(scns, "x3000c0s1b0n0", hsm.StateEmpty)
	for _, id := range []string{"x3000c0s1b0", "x3000c0s1b0n0"} {
		if c, err := s.hsm.Component(ctx, id); err != nil || c.State != hsm.StateEmpty {
			t.Errorf("%s after removal: %+v, %v; want Empty", id, c, err)
		}
	}
	if ep, err := s.hsm.RedfishEndpoint(ctx, "x3000c0s1b0"); err != nil || ep.Enabled == nil || *ep.Enabled {
		t.Errorf("endpoint after removal: %+v, %v; want disabled", ep, err)
	}
	if c, err := s.hsm.Component(ctx, "x3000c0s2b0"); err != nil || c.Flag != "Alert" || c.State == hsm.StateEmpty {
		t.Errorf("BMC still in SLS: %+v, %v; want Alert, not Empty", c, err)
	}
	for x, want := range map[string]string{"x3000c0s1b0": StateRemoved, "x3000c0s2b0": StateMissing} {
		if e, err := s.store.Get(ctx, x); err != nil || e.State != want {
			t.Errorf("%s stored as %q, %v; want %q", x, e.State, err, want)
		}
	}

	if err := s.bmcs[1].BMC.SetFaults(redfishsim.Faults{}); err != nil {
		t.Fatal(err)
	}
	s.svc.CheckPresence(ctx)
	if c, err := s.hsm.Component(ctx, "x3000c0s2b0"); err != nil || c.Flag != "OK" {
		t.Errorf("BMC back: %+v, %v; want Flag OK", c, err)
	}
	if e, _ := s.store.Get(ctx, "x3000c0s2b0"); e.State != StateRegistered {
		t.Errorf("BMC back stored as %q", e.State)
	}
}

// TestRemovalNeedsNodesGone: a BMC SLS holds no object for, only its node
// (the BMC object is optional in SLS), is still in SLS: when it stops
// answering it is flagged Alert, not retired; once its node is deleted
// from SLS too, it is retired.
func TestRemovalNeedsNodesGone(t *testing.T) {
	s := newRiver(t, 1, Config{})
	ctx := t.Context()
	node, err := s.sls.GetHardware(ctx, "x3000c0s1b0n0")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.sls.DeleteHardware(ctx, "x3000c0s1b0"); err != nil { // and its node
		t.Fatal(err)
	}
	if _, err := s.sls.CreateHardware(ctx, node); err != nil {
		t.Fatal(err)
	}
	if err := s.bmcs[0].BMC.SetFaults(redfishsim.Faults{ErrorPaths: []string{"/redfish/v1"}}); err != nil {
		t.Fatal(err)
	}
	s.svc.CheckPresence(ctx)
	if e, err := s.store.Get(ctx, "x3000c0s1b0"); err != nil || e.State != StateMissing {
		t.Fatalf("BMC whose node is in SLS: stored %q, %v; want %q", e.State, err, StateMissing)
	}
	if c, err := s.hsm.Component(ctx, "x3000c0s1b0n0"); err != nil || c.State == hsm.StateEmpty {
		t.Fatalf("node: %+v, %v; want not Empty", c, err)
	}
	if err := s.sls.DeleteHardware(ctx, "x3000c0s1b0n0"); err != nil {
		t.Fatal(err)
	}
	s.svc.CheckPresence(ctx)
	if e, err := s.store.Get(ctx, "x3000c0s1b0"); err != nil || e.State != StateRemoved {
		t.Errorf("BMC with nothing left in SLS: stored %q, %v; want %q", e.State, err, StateRemoved)
	}
	if c, err := s.hsm.Component(ctx, "x3000c0s1b0n0"); err != nil || c.State != hsm.StateEmpty {
		t.Errorf("node: %+v, %v; want Empty", c, err)
	}
}

// gateRetire holds the retirement of one BMC in HSM (its RedfishEndpoint
// PATCH) until release is closed; entered is closed when it arrives.
type gateRetire struct {
	HSM
	hold             string
	once             sync.Once
	entered, release chan struct{}
}

func (g *gateRetire) PatchRedfishEndpoint(ctx context.Context, x string, p hsm.RedfishEndpointPatch) (hsm.RedfishEndpoint, error) {
	if x == g.hold && p.Enabled != nil && !*p.Enabled {
		g.once.Do(func() { close(g.entered) })
		select {
		case <-g.release:
		case <-ctx.Done():
			return hsm.RedfishEndpoint{}, ctx.Err()
		}
	}
	return g.HSM.PatchRedfishEndpoint(ctx, x, p)
}

// TestRemovalNotHeldBySlowHSM: while HSM is slow to take one removal,
// another is done (removals are decided under the lock, HSM is told
// outside it), the slow one is not tried twice at once, and, the BMC
// registered anew while HSM was being told, the removal yields to the
// registration.
func TestRemovalNotHeldBySlowHSM(t *testing.T) {
	clock := newFakeClock()
	s := newRiverSuite(t, 2)
	g := &gateRetire{HSM: s.hsm, hold: "x3000c0s1b0", entered: make(chan struct{}), release: make(chan struct{})}
	s.registerAll(Config{Now: clock.Now, RetryMin: time.Hour, RetryMax: 8 * time.Hour, HSM: g})
	ctx := t.Context()
	for _, x := range []string{"x3000c0s1b0", "x3000c0s2b0"} {
		if err := s.store.SetState(ctx, x, StateRemoving); err != nil {
			t.Fatal(err)
		}
	}
	slow := make(chan struct{})
	go func() { defer close(slow); s.svc.RetryRemovals(ctx) }() // x3000c0s1b0 first, held
	<-g.entered
	other := make(chan struct{})
	go func() { defer close(other); s.svc.RetryRemovals(ctx) }()
	select {
	case <-other:
	case <-time.After(time.Minute): // a guard against a hang, not a timing
		t.Fatal("a removal waited for another's HSM call")
	}
	state := func(x string) string {
		t.Helper()
		e, err := s.store.Get(ctx, x)
		if err != nil {
			t.Fatal(err)
		}
		return e.State
	}
	if got := state("x3000c0s2b0"); got != StateRemoved {
		t.Errorf("x3000c0s2b0 while HSM holds the other: %q, want %q", got, StateRemoved)
	}
	if err := s.store.SetState(ctx, "x3000c0s1b0", StateRegistered); err != nil { // registered anew
		t.Fatal(err)
	}
	close(g.release)
	<-slow
	if got := state("x3000c0s1b0"); got != StateRegistered {
		t.Errorf("x3000c0s1b0 registered during its removal: %q, want %q", got, StateRegistered)
	}
}

// TestRemovalNotTriedTwiceByStaleRound: a retry round that listed a
// removal as due does not try it again once another caller has tried it
// and failed meanwhile (its backoff is checked when it is claimed, not
// only when the round lists what is due): one attempt, one backoff step.
func TestRemovalNotTriedTwiceByStaleRound(t *testing.T) {
	clock := newFakeClock()
	s := newRiverSuite(t, 2)
	h := &countRetires{HSM: s.hsm}
	g := &gateRetire{HSM: h, hold: "x3000c0s1b0", entered: make(chan struct{}), release: make(chan struct{})}
	s.registerAll(Config{Now: clock.Now, RetryMin: time.Hour, RetryMax: 8 * time.Hour, HSM: g})
	ctx := t.Context()
	for _, x := range []string{"x3000c0s1b0", "x3000c0s2b0"} {
		if err := s.store.SetState(ctx, x, StateRemoving); err != nil {
			t.Fatal(err)
		}
	}
	s.stopHSM() // every attempt fails
	stale := make(chan struct{})
	go func() { defer close(stale); s.svc.RetryRemovals(ctx) }() // lists both, held on x3000c0s1b0
	<-g.entered
	s.svc.RetryRemovals(ctx) // x3000c0s1b0 in flight: tries x3000c0s2b0 alone, and fails
	if n := h.n.Load(); n != 1 {
		t.Fatalf("while the stale round is held: %d attempts, want 1", n)
	}
	close(g.release)
	<-stale
	if n := h.n.Load(); n != 2 {
		t.Errorf("after the stale round: %d attempts, want 2 (x3000c0s2b0 once)", n)
	}
}
