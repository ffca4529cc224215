package inventory

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/hmsuite/hms/heartbeat/agent"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// beaters answers as hbtd's POST /hbstates would: the nodes in beating
// heartbeat; while down is set, every query fails.
type beaters struct {
	mu      sync.Mutex
	beating map[string]bool
	down    bool
	asked   int
}

func (b *beaters) States(_ context.Context, xnames []string) ([]agent.HBState, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.asked++
	if b.down {
		return nil, errors.New("hbtd: connection refused")
	}
	out := make([]agent.HBState, 0, len(xnames))
	for _, x := range xnames {
		out = append(out, agent.HBState{XName: x, Heartbeating: b.beating[x]})
	}
	return out, nil
}

func (b *beaters) set(fn func(*beaters)) { b.mu.Lock(); fn(b); b.mu.Unlock() }

// TestHeartbeatCheck: a node On that heartbeats is set Ready, at start and
// whenever it turns On later (a node put back heartbeats while HSM has it
// Empty, which a heartbeat cannot leave; the walk that finds it On
// brings it back); one that does not heartbeat stays On; a failed hbtd
// query is retried before the check moves on.
func TestHeartbeatCheck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const beating, silent, back = "x3000c0s1b0n0", "x3000c0s2b0n0", "x3000c0s3b0n0"
		e := newRFEnv(t, DiscoveryConfig{})
		e.Must(204, "POST", "/State/Components", map[string]any{"Components": []map[string]string{
			{"ID": beating, "State": hsm.StateOn}, {"ID": silent, "State": hsm.StateOn}, {"ID": back, "State": hsm.StateEmpty}}})
		hb := &beaters{beating: map[string]bool{beating: true, back: true}}
		timers := &rfTimers{}
		h := NewHeartbeatCheck(e.disc, HeartbeatCheckConfig{HBTD: hb, After: timers.after})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = h.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
		state := func(id string) string { c, _ := e.store.comp.Component(id); return c.State }
		noop := func() {}

		rfEventually(t, "the heartbeating node On at start set Ready", noop, func() bool { return state(beating) == hsm.StateReady })
		if got := state(silent); got != hsm.StateOn {
			t.Errorf("silent node: %s, want On", got)
		}
		// hbtd's Ready for the node put back is refused while it is Empty.
		e.Must(204, "PATCH", "/State/Components/"+back+"/StateData", map[string]string{"State": hsm.StateReady})
		if got := state(back); got != hsm.StateEmpty {
			t.Fatalf("Empty node after a Ready update: %s, want Empty (HMS's state machine)", got)
		}
		// hbtd is down when the walk finds the node On: retried.
		hb.set(func(b *beaters) { b.down = true })
		e.Must(204, "PATCH", "/State/Components/"+back+"/StateData", map[string]any{"State": hsm.StateOn, "Force": true})
		rfEventually(t, "a retry waiting", noop, func() bool { timers.mu.Lock(); defer timers.mu.Unlock(); return len(timers.pending) > 0 })
		if got := state(back); got != hsm.StateOn {
			t.Fatalf("node put back, hbtd down: %s, want On", got)
		}
		hb.set(func(b *beaters) { b.down = false })
		rfEventually(t, "the node put back set Ready", func() { timers.fire() }, func() bool { return state(back) == hsm.StateReady })
		if got := state(silent); got != hsm.StateOn {
			t.Errorf("silent node: %s, want On", got)
		}
	})
}
