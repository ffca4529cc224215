package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/power/pcs"
)

// TestTransitionGivenUp: a PCS that forgot the transition bos started for
// a power-on (404), or that stops answering about it (as many checks and
// for as long as -transition-give-up-checks and -transition-give-up say),
// does not leave its node waiting out max_power_on_wait_time: the node is
// powered on again at the next pass, and past its retry_policy fails
// naming the transition.
func TestTransitionGivenUp(t *testing.T) {
	tests := []struct {
		name string
		code int
		// quiet is how many unanswered checks leave the node waiting.
		quiet int
		// giveUp and checks are bos's limits (zero: the defaults).
		giveUp time.Duration
		checks int
		want   string
	}{
		{name: "forgotten", code: http.StatusNotFound,
			want: "PCS no longer knows it (expired, or PCS restarted without it)"},
		{name: "unanswered", code: http.StatusInternalServerError, quiet: DefaultTransitionGiveUpChecks - 1,
			want: "PCS did not answer about it for 2m40s"},
		{name: "unanswered, two checks", code: http.StatusInternalServerError, quiet: 1, checks: 2, giveUp: 30 * time.Second,
			want: "PCS did not answer about it for 40s"},
		{name: "unanswered, long give-up", code: http.StatusInternalServerError, quiet: 8, checks: 2, giveUp: 5 * time.Minute,
			want: "PCS did not answer about it for 5m20s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnvWith(t, func(cfg *DaemonConfig) {
				cfg.TransitionGiveUp, cfg.TransitionGiveUpChecks = tt.giveUp, tt.checks
			}, n1)
			svc := e.daemon.svc
			if code := e.call("PATCH", "/v2/options", `{"max_power_on_wait_time":3600,"default_retry_policy":2}`, nil); code != 200 {
				t.Fatal(code)
			}
			e.cluster.set(n1, func(n *simNode) { n.ignoreOn = true })
			e.template("t1", "img1", n1)
			e.session(`{"name":"s1","operation":"boot","template_name":"t1"}`)
			e.reconcile()
			e.cluster.takeCalls()
			e.cluster.mu.Lock()
			e.cluster.lost = tt.code
			e.cluster.mu.Unlock()
			check := func() {
				e.clock.Advance(40 * time.Second)
				svc.checkTransitions(t.Context(), e.clock.Now())
				e.reconcile()
			}
			for i := range tt.quiet {
				check()
				if calls := e.cluster.takeCalls(); slices.Contains(calls, "PCS On "+n1) {
					t.Fatalf("unanswered check %d powered on again: %q", i+1, calls)
				}
			}
			check()
			if calls := e.cluster.takeCalls(); !slices.Contains(calls, "PCS On "+n1) {
				t.Fatalf("transition given up, calls %q, want the power-on again", calls)
			}
			if c := e.component(n1); c.Status.Status != StatusPowerOnCalled || c.EventStats.PowerOnAttempts != 2 {
				t.Fatalf("after the retry: %+v", c)
			}
			for range tt.quiet {
				e.clock.Advance(40 * time.Second)
				svc.checkTransitions(t.Context(), e.clock.Now())
			}
			check()
			c := e.component(n1)
			prefix := "failed to power on after 2 attempts: PCS On transition 00000000-0000-0000-0000-000000000001 given up: "
			if c.Status.Status != StatusFailed || c.Enabled || !strings.HasPrefix(c.Error, prefix+tt.want) {
				t.Errorf("past the retries: status %q, enabled %v, error %q, want %q", c.Status.Status, c.Enabled, c.Error, prefix+tt.want)
			}
		})
	}
}

// TestGracefulOffGivenUp: a graceful power-off whose PCS transition bos
// gives up on is not escalated to a forceful one long before
// max_power_off_wait_time (review-4: Force-Off 40 s into a 3,600 s wait,
// while the node may be shutting down): Soft-Off is sent again, counted,
// within default_retry_policy; past it the node waits; Force-Off comes
// max_power_off_wait_time after the last Soft-Off.
func TestGracefulOffGivenUp(t *testing.T) {
	e := newEnv(t, n1)
	svc := e.daemon.svc
	if code := e.call("PATCH", "/v2/options", `{"max_power_off_wait_time":3600,"default_retry_policy":2}`, nil); code != 200 {
		t.Fatal(code)
	}
	e.cluster.set(n1, func(n *simNode) { n.on, n.ignoreGraceful = true, true })
	e.template("t1", "img1", n1)
	e.session(`{"name":"s1","operation":"shutdown","template_name":"t1"}`)
	e.reconcile()
	e.reconcile()
	if calls := e.cluster.takeCalls(); !slices.Contains(calls, "PCS Soft-Off "+n1) {
		t.Fatalf("calls %q, want the graceful power-off", calls)
	}
	e.cluster.mu.Lock()
	e.cluster.lost = http.StatusNotFound
	e.cluster.mu.Unlock()
	for _, want := range []struct {
		call     string // "": none
		attempts int
	}{
		{call: "PCS Soft-Off " + n1, attempts: 2},
		{call: "", attempts: 2}, // past the retries: it waits
	} {
		e.clock.Advance(40 * time.Second)
		svc.checkTransitions(t.Context(), e.clock.Now())
		e.reconcile()
		calls := e.cluster.takeCalls()
		if slices.Contains(calls, "PCS Force-Off "+n1) || (want.call != "") != slices.Contains(calls, want.call) {
			t.Fatalf("40 s after a graceful power-off was given up: calls %q, want %q", calls, want.call)
		}
		if c := e.component(n1); c.Status.Status != StatusPowerOffGracefullyCalled || c.EventStats.PowerOffGracefulAttempts != want.attempts {
			t.Fatalf("status %q, %d graceful attempts; want %q, %d", c.Status.Status, c.EventStats.PowerOffGracefulAttempts,
				StatusPowerOffGracefullyCalled, want.attempts)
		}
	}
	e.clock.Advance(3600*time.Second - 40*time.Second)
	e.reconcile()
	if calls := e.cluster.takeCalls(); !slices.Contains(calls, "PCS Force-Off "+n1) {
		t.Errorf("max_power_off_wait_time after the last Soft-Off: calls %q, want the forceful power-off", calls)
	}
}

// fakePCS answers every transition read with in-progress and notes when
// each was read (bubbled time since start).
type fakePCS struct {
	start time.Time

	mu     sync.Mutex
	checks map[string][]time.Duration
}

func (p *fakePCS) StartTransition(context.Context, pcs.Operation, int, []pcs.Location) (pcs.Created, error) {
	return pcs.Created{}, errors.New("not in this test")
}

func (p *fakePCS) Transition(_ context.Context, id string) (pcs.Transition, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.checks[id] = append(p.checks[id], time.Since(p.start))
	return pcs.Transition{TransitionID: id, Status: pcs.TransitionInProgress}, nil
}

func (p *fakePCS) Transitions(context.Context) ([]pcs.Transition, error) { return nil, nil }

func (p *fakePCS) PowerStatus(context.Context, pcs.PowerStatusRequest) ([]pcs.PowerStatus, error) {
	return nil, errors.New("not in this test")
}

// TestTransitionChecksOwnSchedule: each transition is checked 0.5 s after
// it started, then 1 s and 2 s later, however many new ones start in
// between (one every 0.4 s here; a shared timer that each new one restarted
// would never check any of them).
func TestTransitionChecksOwnSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, err := OpenStore(t.Context(), filepath.Join(t.TempDir(), "bos.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		p := &fakePCS{start: time.Now(), checks: map[string][]time.Duration{}}
		svc, err := New(t.Context(), store, nil, nil, p, Config{})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); svc.watchTransitions(ctx) }()
		for i := range 10 {
			svc.tracked.add(fmt.Sprintf("t%d", i), opened{op: pcs.OpOn, action: ActionPowerOn})
			time.Sleep(400 * time.Millisecond)
		}
		synctest.Wait()
		cancel()
		<-done
		want := map[string][]time.Duration{}
		for i := range 10 {
			for _, at := range []int{500, 1500, 3500} {
				if at += 400 * i; at < 4000 {
					want[fmt.Sprintf("t%d", i)] = append(want[fmt.Sprintf("t%d", i)], time.Duration(at)*time.Millisecond)
				}
			}
		}
		if d := cmp.Diff(want, p.checks); d != "" {
			t.Errorf("checks by transition, time since the first started (-want +got):\n%s", d)
		}
		if got := strings.Join(svc.tracked.due(time.Now().Add(time.Hour)), ","); got != "t0,t1,t2,t3,t4,t5,t6,t7,t8,t9" {
			t.Errorf("open transitions %q", got)
		}
	})
}

// TestGiveUpMarksOnlyStored: a transition given up ends its components'
// wait (overdue) only once their error is stored; when the store fails
// they stay as they were and keep their wait (the mark was once set before
// the save, which then failed).
func TestGiveUpMarksOnlyStored(t *testing.T) {
	for _, tt := range []struct {
		name    string
		closed  bool
		overdue int
	}{
		{name: "stored", overdue: 1},
		{name: "store failed", closed: true, overdue: 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			store, err := OpenStore(t.Context(), filepath.Join(t.TempDir(), "bos.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			svc, err := New(t.Context(), store, nil, nil, &fakePCS{checks: map[string][]time.Duration{}}, Config{})
			if err != nil {
				t.Fatal(err)
			}
			const id, stamp = "x3000c0s1b0n0", "2026-11-25T00:00:00Z"
			err = svc.upsert(t.Context(), []string{id}, func(c *Component) bool {
				c.Enabled, c.LastAction = true, LastAction{Action: ActionPowerOn, LastUpdated: stamp}
				return true
			})
			if err != nil {
				t.Fatal(err)
			}
			if tt.closed {
				store.Close()
			}
			svc.giveUp(t.Context(), "t1", opened{op: pcs.OpOn, action: ActionPowerOn, stamp: stamp, ids: []string{id}}, "test")
			svc.mu.Lock()
			got, failed := len(svc.overdue), svc.comps[id].LastAction.Failed
			svc.mu.Unlock()
			if got != tt.overdue || failed != (tt.overdue == 1) {
				t.Errorf("%d overdue, failed %v; want %d", got, failed, tt.overdue)
			}
		})
	}
}
