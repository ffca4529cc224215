package orchestrator

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/statemgr/client"
)

// woken reports (and takes) a pending wake-up of the operators.
func (e *env) woken() bool {
	select {
	case <-e.daemon.svc.wake:
		return true
	default:
		return false
	}
}

// TestSCNWakesOperators: an SCN naming a component bos is moving wakes the
// operators; one about any other node does not; a malformed one is 400.
func TestSCNWakesOperators(t *testing.T) {
	e := newEnv(t, n1, n2)
	e.template("t1", "img1", n1)
	e.session(`{"name":"s1","operation":"boot","template_name":"t1"}`)
	e.reconcile()
	e.woken()
	tests := []struct {
		name, body string
		code       int
		wake       bool
	}{
		{name: "other node", body: `{"Components":["` + n2 + `"],"State":"Ready"}`, code: 200},
		{name: "moving node", body: `{"Components":["` + n2 + `","` + n1 + `"],"State":"Ready"}`, code: 200, wake: true},
		{name: "not an SCN", body: `{"Components":"x"}`, code: 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code := e.call("POST", SCNPath, tt.body, nil); code != tt.code {
				t.Errorf("POST %s: %d, want %d", tt.body, code, tt.code)
			}
			if got := e.woken(); got != tt.wake {
				t.Errorf("woken %v, want %v", got, tt.wake)
			}
		})
	}
}

// subscribe has bos hold its subscription in the cluster's HSM, at
// http://bos.test/v2/scn, until the test ends.
func (e *env) subscribe(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.daemon.svc.Subscribe(ctx, client.New(e.cluster.srv.URL, http.DefaultClient, "bos"), "http://bos.test/v2/scn", nil)
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// TestSubscribeSlowsPoll: bos subscribes to HSM's power and readiness
// states; once subscribed the operators poll every FallbackPoll, but wake
// at the first component timeout before it (here a graceful power-off's).
func TestSubscribeSlowsPoll(t *testing.T) {
	e := newEnv(t, n1)
	svc := e.daemon.svc
	if code := e.call("PATCH", "/v2/options", `{"discovery_frequency":0}`, nil); code != 200 {
		t.Fatal(code)
	}
	if got := svc.nextPass(); got != 15*time.Second {
		t.Errorf("poll before the subscription %v, want polling_frequency 15s", got)
	}
	e.woken() // the PATCH's
	e.subscribe(t)
	<-svc.wake // HSM holds it
	want := []string{"On", "Off", "Ready", "Standby", "Halt"}
	e.cluster.mu.Lock()
	subs := e.cluster.subs
	e.cluster.mu.Unlock()
	if len(subs) != 1 || subs[0].Url != "http://bos.test/v2/scn" || subs[0].Subscriber != "bos@bos.test:80" {
		t.Fatalf("subscriptions %+v", subs)
	}
	if d := cmp.Diff(want, subs[0].States); d != "" {
		t.Errorf("subscribed states (-want +got):\n%s", d)
	}
	if got := svc.nextPass(); got != 10*time.Minute {
		t.Errorf("poll once subscribed %v, want the fallback 10m", got)
	}
	e.cluster.set(n1, func(n *simNode) { n.on, n.comp.State, n.ignoreGraceful = true, "Ready", true })
	e.template("t1", "img1", n1)
	e.session(`{"name":"r1","operation":"reboot","template_name":"t1"}`)
	e.reconcile()
	if got := e.component(n1).Status.Status; got != StatusPowerOffGracefullyCalled {
		t.Fatalf("n1 %q", got)
	}
	e.clock.Advance(100 * time.Second)
	if got := svc.nextPass(); got != 200*time.Second {
		t.Errorf("sleep with a graceful power-off 100s old: %v, want the 200s left of max_power_off_wait_time", got)
	}
}

// TestChangedSubscriptionWakes: a check that finds bos's subscription
// changed (another daemon or an operator replaced its filters; SCNs bos
// wanted were not sent meanwhile) puts its filters back and wakes the
// operators, whose pass reads what those SCNs would have told.
func TestChangedSubscriptionWakes(t *testing.T) {
	ticks := make(chan time.Time)
	e := newEnvWith(t, func(cfg *DaemonConfig) {
		cfg.SubscriptionAfter = func(time.Duration) <-chan time.Time { return ticks }
	}, n1)
	svc := e.daemon.svc
	e.subscribe(t)
	<-svc.wake // HSM holds it
	e.cluster.mu.Lock()
	e.cluster.subs[0].States = []string{"Ready"}
	e.cluster.mu.Unlock()
	ticks <- time.Time{} // the next check
	select {
	case <-svc.wake:
	case <-time.After(10 * time.Second):
		t.Fatal("the operators were not woken after the subscription was restored")
	}
	e.cluster.mu.Lock()
	defer e.cluster.mu.Unlock()
	if d := cmp.Diff([]string{"On", "Off", "Ready", "Standby", "Halt"}, e.cluster.subs[0].States); d != "" {
		t.Errorf("states after the check (-want +got):\n%s", d)
	}
}
