package heartbeat

import (
	"bytes"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const (
	testWarn = 10 * time.Second
	testErr  = 30 * time.Second
)

// runTracker starts a tracker with the test thresholds in the current bubble.
func runTracker(t *testing.T, cfg Config) (*Tracker, *recorder) {
	t.Helper()
	if cfg.Warntime == 0 {
		cfg.Warntime, cfg.Errtime = testWarn, testErr
	}
	rec := &recorder{}
	tr := NewTracker(cfg, rec)
	ctx := t.Context()
	go tr.Run(ctx)
	return tr, rec
}

func TestTrackerLifecycle(t *testing.T) {
	tests := []struct {
		name string
		// script runs in the bubble and returns the notifications expected at each step.
		steps []step
	}{
		{name: "start warn die restart", steps: []step{
			{beat: true, want: []string{"x0c0s0b0n0:" + MsgStarted}},
			{wait: testWarn - Tick, want: nil},
			{wait: time.Second, want: []string{"x0c0s0b0n0:" + MsgWarning}},
			{wait: testErr - testWarn - time.Second, want: nil},
			{wait: time.Second, want: []string{"x0c0s0b0n0:" + MsgDead}},
			{wait: time.Hour, want: nil},
			{beat: true, want: []string{"x0c0s0b0n0:" + MsgRestarted}},
		}},
		{name: "steady beats never warn", steps: []step{
			{beat: true, want: []string{"x0c0s0b0n0:" + MsgStarted}},
			{wait: 9 * time.Second, beat: true},
			{wait: 9 * time.Second, beat: true},
			{wait: 9 * time.Second, beat: true},
			{wait: 9 * time.Second, want: nil},
		}},
		{name: "back after a warning", steps: []step{
			{beat: true, want: []string{"x0c0s0b0n0:" + MsgStarted}},
			{wait: 15 * time.Second, want: []string{"x0c0s0b0n0:" + MsgWarning}},
			{beat: true, want: []string{"x0c0s0b0n0:" + MsgRestarted}},
			{wait: testWarn - Tick, want: nil},
			{wait: Tick, want: []string{"x0c0s0b0n0:" + MsgWarning}},
			{wait: testErr - testWarn - Tick, want: nil},
			{wait: Tick, want: []string{"x0c0s0b0n0:" + MsgDead}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr, rec := runTracker(t, Config{})
				for i, s := range tt.steps {
					time.Sleep(s.wait)
					if s.beat {
						mustBeat(t, tr, "x0c0s0b0n0")
					}
					synctest.Wait()
					if diff := cmp.Diff(s.want, rec.take(), cmpEmpty); diff != "" {
						t.Fatalf("step %d: notifications (-want +got):\n%s", i, diff)
					}
				}
			})
		})
	}
}

type step struct {
	wait time.Duration
	beat bool
	want []string
}

var cmpEmpty = cmpopts.EquateEmpty()

// TestDetectionWithinATick checks a silent node is declared dead no later than
// one Tick after its deadline, and never before.
func TestDetectionWithinATick(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, rec := runTracker(t, Config{})
		time.Sleep(37 * time.Millisecond) // off the tick grid
		start := time.Now()
		mustBeat(t, tr, "x1c0s0b0n0")
		time.Sleep(testErr + 2*time.Second)
		synctest.Wait()
		var dead time.Time
		for _, c := range rec.all() {
			if c.To == Dead {
				dead = c.At
			}
		}
		late := dead.Sub(start.Add(testErr))
		if late < 0 || late > Tick {
			t.Fatalf("declared dead %v after its deadline, want within [0, %v]", late, Tick)
		}
	})
}

func TestSetThresholdsLive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, rec := runTracker(t, Config{})
		mustBeat(t, tr, "x0c0s0b0n0")
		time.Sleep(2 * time.Second)
		tr.SetThresholds(3*time.Second, 5*time.Second)
		time.Sleep(1*time.Second + Tick)
		synctest.Wait()
		if diff := cmp.Diff([]string{"x0c0s0b0n0:" + MsgStarted, "x0c0s0b0n0:" + MsgWarning}, rec.take()); diff != "" {
			t.Fatalf("after lowering Warntime to 3 s (-want +got):\n%s", diff)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if diff := cmp.Diff([]string{"x0c0s0b0n0:" + MsgDead}, rec.take()); diff != "" {
			t.Fatalf("after lowering Errtime to 5 s (-want +got):\n%s", diff)
		}
		mustBeat(t, tr, "x0c0s0b0n0")
		tr.SetThresholds(time.Minute, 2*time.Minute)
		time.Sleep(59 * time.Second)
		synctest.Wait()
		if diff := cmp.Diff([]string{"x0c0s0b0n0:" + MsgRestarted}, rec.take()); diff != "" {
			t.Fatalf("after raising Warntime to 60 s (-want +got):\n%s", diff)
		}
	})
}

// TestTrackerPauseGivesGrace stops the tracker's clock view for longer than
// Errtime, as a suspended VM or SIGSTOP would: nobody may be declared dead.
func TestTrackerPauseGivesGrace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var offset atomic.Int64
		now := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
		tr, rec := runTracker(t, Config{Now: now})
		mustBeatAt(t, tr, "x0c0s0b0n0", now())
		mustBeatAt(t, tr, "x0c0s0b0n1", now())
		time.Sleep(5 * time.Second)
		synctest.Wait()
		rec.take()
		offset.Store(int64(5 * time.Minute)) // the tracker wakes up 5 minutes later
		time.Sleep(Tick)
		synctest.Wait()
		if got := rec.take(); len(got) != 0 {
			t.Fatalf("after a pause, notifications %v, want none", got)
		}
		time.Sleep(5 * time.Second)
		mustBeatAt(t, tr, "x0c0s0b0n0", now())
		time.Sleep(testErr - 6*time.Second)
		synctest.Wait()
		if diff := cmp.Diff([]string{"x0c0s0b0n0:" + MsgWarning, "x0c0s0b0n1:" + MsgWarning}, rec.take()); diff != "" {
			t.Fatalf("within Errtime of the pause (-want +got):\n%s", diff)
		}
		time.Sleep(time.Second + Tick)
		synctest.Wait()
		if diff := cmp.Diff([]string{"x0c0s0b0n1:" + MsgDead}, rec.take()); diff != "" {
			t.Fatalf("Errtime after the pause (-want +got):\n%s", diff)
		}
	})
}

func mustBeatAt(t *testing.T, tr *Tracker, name string, at time.Time) {
	t.Helper()
	if err := tr.Beat(name, at); err != nil {
		t.Fatal(err)
	}
}

func TestTrackerCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, _ := runTracker(t, Config{})
		for _, n := range []string{"x0c0s0b0n0", "x0c0s0b0n1", "X0C0S0B0N2"} {
			mustBeat(t, tr, n)
		}
		time.Sleep(5 * time.Second)
		mustBeat(t, tr, "x0c0s0b0n0")
		time.Sleep(6 * time.Second)
		synctest.Wait()
		if diff := cmp.Diff([4]int{Alive: 1, Warned: 2}, tr.Counts()); diff != "" {
			t.Fatalf("counts (-want +got):\n%s", diff)
		}
		if got := tr.State("x0c0s0b0n2"); got != Warned {
			t.Fatalf("upper-case beat tracked as %v under the normalised name, want warned", got)
		}
	})
}

// TestTrackerLogsTransitions: every transition is logged at INFO with the
// node and both states.
func TestTrackerLogsTransitions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		tr, _ := runTracker(t, Config{Log: slog.New(slog.NewTextHandler(&logs, nil))})
		mustBeat(t, tr, "x0c0s0b0n0")
		time.Sleep(testErr + Tick)
		synctest.Wait()
		got := logs.String()
		for _, want := range []string{"level=INFO msg=heartbeat_state_changed xname=x0c0s0b0n0 from=unknown to=alive",
			"from=alive to=warned", "from=warned to=dead"} {
			if !strings.Contains(got, want) {
				t.Errorf("log lacks %q:\n%s", want, got)
			}
		}
	})
}
