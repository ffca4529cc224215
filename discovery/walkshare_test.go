package discovery

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/snmpsim"
	"github.com/hmsuite/hms/ipxe/lease"
)

// clockedWalker walks with w once gate is closed; each walk takes a second
// of the fake clock, as a real walk takes time.
type clockedWalker struct {
	w     Walker
	clock *fakeClock
	gate  <-chan struct{}
}

func (c clockedWalker) Walk(ctx context.Context, sw Switch) (Table, WalkStats, error) {
	<-c.gate
	defer c.clock.Add(time.Second)
	return c.w.Walk(ctx, sw)
}

// TestRetriesShareWalks counts, at two simulated switches, the walks of
// their forwarding tables while 20 MACs fail at once (on ports SLS cables
// to nothing) and are retried together: the leases, noticed at one
// instant, cost each switch one walk; their retries, due together after
// the tables expired, one more; retries due after a walk made for another
// reason (the periodic refresh) none.
func TestRetriesShareWalks(t *testing.T) {
	const perSwitch = 10
	agents := map[string]*snmpsim.Agent{}
	hw := map[string]any{"x3000": map[string]any{"Xname": "x3000", "Class": "River"}}
	var macs []string
	for k, x := range []string{"x3000c0w14", "x3000c0w15"} {
		var sw snmpsim.Switch
		for i := range perSwitch {
			mac := fmt.Sprintf("02:00:00:00:%02x:%02x", k+1, i+1)
			macs = append(macs, mac)
			sw.Ports = append(sw.Ports, snmpsim.Port{Bridge: i + 1, IfIndex: 1001 + i, Name: fmt.Sprintf("ethernet1/1/%d", i+1)})
			sw.FDB = append(sw.FDB, snmpsim.Entry{MAC: mac, Bridge: i + 1, VLAN: 1})
		}
		a, addr := startSim(t, sw)
		agents[x] = a
		hw[x] = map[string]any{"Xname": x, "Class": "River", "ExtraProperties": map[string]any{"IP4addr": addr}}
	}
	clock, gate := newFakeClock(), make(chan struct{})
	s := newSuite(t, hw, nil)
	s.startService(clockedWalker{w: NewSNMPWalker(SNMPConfig{}), clock: clock, gate: gate}, Config{
		Switch: SwitchConfig{Community: "public"}, Now: clock.Now, FDBTTL: time.Minute, FDBRefresh: time.Hour,
		SLSWatch: time.Hour, RetryMin: 20 * time.Millisecond, RetryMax: time.Hour})
	<-s.svc.Started()

	round := func(step string, wantWalks int) {
		t.Helper()
		for range macs {
			o := s.next()
			var le *locateError
			if !errors.As(o.err, &le) || le.reason != ReasonNoConnector {
				t.Fatalf("%s: outcome %+v (%v), want %s", step, o, o.err, ReasonNoConnector)
			}
		}
		for x, a := range agents {
			if n := a.Walks(oidQFdbPort); n != wantWalks {
				t.Errorf("%s: switch %s walked %d times, want %d", step, x, n, wantWalks)
			}
		}
	}
	for i, mac := range macs { // noticed at one instant: the clock stands still
		s.svc.Notice(t.Context(), lease.Event{Kind: lease.Commit, MACAddress: mac, IPAddress: fmt.Sprintf("127.0.9.%d", i+1)})
	}
	close(gate)
	round("leases at once", 1)

	clock.Add(2 * time.Minute) // every retry is due; the tables have expired
	round("retries after the TTL", 2)

	s.svc.fdb.Refresh(t.Context(), s.svc.loc.Switches(), 0)
	clock.Add(10 * time.Second) // every retry is due; the refresh's tables are newer
	round("retries after a refresh", 3)
}
