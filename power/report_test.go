package power

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/power/pcs"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// TestTaskReportedAsItEnds: HSM is told that a node is off as soon as its
// task has succeeded, while another task of the same transition still
// waits on its BMC (bos powers the first node on meanwhile); the
// transition's end tells it of no node twice.
func TestTaskReportedAsItEnds(t *testing.T) {
	e := newEnv(t, 2, nil)
	e.bmcClock = newTimerClock() // the hung BMC's request ends when the test says
	e.clock = &skipClock{now: time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)}
	e.stopPCS()
	e.startPCS()
	n0, n1 := e.node(0), e.node(1)
	_ = e.fleet.Members()[1].BMC.SetFaults(redfishsim.Faults{Hang: true})
	id := e.start("force-off", 1, locs(n0, n1)...)
	e.events.wait(t, func(ev Event) bool { return ev.Kind == EventReported && slices.Contains(ev.Xnames, n0) })
	if c, err := e.hsm.Component(t.Context(), n0); err != nil || c.State != hsm.StateOff {
		t.Errorf("HSM state of %s once its task succeeded: %+v %v", n0, c, err)
	}
	if tr := e.get(id); tr.Status != pcs.TransitionInProgress || tasks(tr)[n1].Status != pcs.TaskInProgress {
		t.Fatalf("the transition ended before the test let the hung BMC go: %+v", tr)
	}
	done := make(chan error, 1)
	go func() { done <- e.daemon.Service().Wait(t.Context(), id) }()
	for waiting := true; waiting; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			waiting = false
		case <-e.bmcClock.fire():
		}
	}
	e.events.mu.Lock()
	defer e.events.mu.Unlock()
	var reported []string
	for _, ev := range e.events.all {
		if ev.Kind == EventReported {
			reported = append(reported, ev.Xnames...)
		}
	}
	if !slices.Equal(reported, []string{n0}) {
		t.Errorf("HSM told of %q, want %s once (%s failed)", reported, n0, n1)
	}
}

// TestReportsCoalesced: 10,000 tasks that end over a second make a few
// reports to HSM (one per ReportInterval), each node in one of them; a
// flush reports at once what is still queued of the nodes it names, after
// the report under way.
func TestReportsCoalesced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var calls [][]string
		push := func(_ context.Context, ids []string) {
			mu.Lock()
			calls = append(calls, ids)
			mu.Unlock()
		}
		r := newReporter(250*time.Millisecond, time.After, push)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- r.run(ctx) }()
		var all []string
		for i := range 10000 {
			x := fmt.Sprintf("x%dc0s0b0n0", i)
			all = append(all, x)
			r.add(x)
			if i%100 == 99 {
				time.Sleep(10 * time.Millisecond)
			}
		}
		r.add("x1c0s0b0n1", "x1c0s0b0n2")
		r.flush(ctx, []string{"x1c0s0b0n1", "x1c0s0b0n3"})
		time.Sleep(time.Second)
		synctest.Wait()
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(calls) > 6 {
			t.Errorf("%d reports to HSM, want at most 6 (one per 250 ms)", len(calls))
		}
		seen := map[string]int{}
		for _, c := range calls {
			for _, x := range c {
				seen[x]++
			}
		}
		for _, x := range append(all, "x1c0s0b0n1", "x1c0s0b0n2") {
			if seen[x] != 1 {
				t.Errorf("%s reported %d times, want once", x, seen[x])
			}
		}
		if len(seen) != len(all)+2 {
			t.Errorf("%d components reported, want %d", len(seen), len(all)+2)
		}
	})
}
