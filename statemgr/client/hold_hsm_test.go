package client_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/hmsuite/hms/statemgr/client"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// holdEnv is a Hold running against a real HSM whose database a test can
// replace (an HSM restarted empty), on a clock the test steps.
type holdEnv struct {
	api      atomic.Pointer[http.Handler]
	hc       *client.Client
	ticks    chan time.Time
	waiting  chan time.Duration
	held     chan bool
	restored prometheus.Counter
	regained atomic.Int32 // HoldConfig.Regained's calls
}

func newHoldEnv(t *testing.T) *holdEnv {
	t.Helper()
	e := &holdEnv{ticks: make(chan time.Time), waiting: make(chan time.Duration), held: make(chan bool, 8),
		restored: client.NewRestoredCounter("bss", nil)}
	e.replaceHSM(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		(*e.api.Load()).ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	e.hc = client.New(srv.URL, srv.Client(), "tester")
	return e
}

// replaceHSM puts an HSM with an empty database behind the URL.
func (e *holdEnv) replaceHSM(t *testing.T) {
	h := hsmAPI(t)
	e.api.Store(&h)
}

// hold runs Hold for callback until the test ends; its checks wait on
// e.ticks, and each tells e.waiting how long it would have waited.
func (e *holdEnv) hold(t *testing.T, callback string) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	done := make(chan struct{})
	on := true
	name := client.SubscriberName("bss", callback)
	go func() {
		defer close(done)
		client.Hold(ctx, e.hc, client.HoldConfig{
			Build: func(v hsm.Values) hsm.Subscription {
				return hsm.Subscription{Subscriber: name, Enabled: &on, Url: callback, States: client.Known([]string{"On", "Off"}, v.State)}
			},
			After: func(d time.Duration) <-chan time.Time {
				select {
				case e.waiting <- d:
				case <-ctx.Done():
				}
				return e.ticks
			},
			Held:     func(h bool) { e.held <- h },
			Restored: e.restored,
			Regained: func(context.Context) { e.regained.Add(1) },
			Log:      slog.New(slog.DiscardHandler),
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// checked waits until Hold has made a check, which found HSM answering.
func (e *holdEnv) checked(t *testing.T) {
	t.Helper()
	if d := <-e.waiting; d != client.DefaultHoldCheck {
		t.Fatalf("Hold waits %v after its check, want %v (a failed check)", d, client.DefaultHoldCheck)
	}
}

// step runs one more check.
func (e *holdEnv) step(t *testing.T) {
	t.Helper()
	e.ticks <- time.Time{}
	e.checked(t)
}

// heldSince returns what Hold reported since the last call.
func (e *holdEnv) heldSince() []bool {
	var out []bool
	for {
		select {
		case h := <-e.held:
			out = append(out, h)
		default:
			return out
		}
	}
}

// only returns HSM's one subscription, failing the test unless there is
// exactly one, named as want and to its Url.
func (e *holdEnv) only(t *testing.T, want hsm.Subscription) hsm.Subscription {
	t.Helper()
	subs, err := e.hc.Subscriptions(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(subs) != 1 || subs[0].Subscriber != want.Subscriber || subs[0].Url != want.Url {
		t.Fatalf("HSM's subscriptions = %+v, want one of %s to %s", subs, want.Subscriber, want.Url)
	}
	if d := cmp.Diff(want.States, subs[0].States); d != "" {
		t.Errorf("states (-want +got):\n%s", d)
	}
	return subs[0]
}

// TestHoldRestores: Hold subscribes, deleting the subscription an older
// build made to the same callback under agent@host; and subscribes again,
// counted and reported (Regained: the holder catches up), after HSM
// deleted it (an operator's DELETE, or -scn-dead-after), after its
// filters were changed, and after HSM came back with an empty database.
func TestHoldRestores(t *testing.T) {
	e := newHoldEnv(t)
	ctx := t.Context()
	const callback = "http://127.0.0.1:27778/boot/v1/scn"
	want := hsm.Subscription{Subscriber: "bss@127.0.0.1:27778", Url: callback, States: []string{"On", "Off"}}
	if _, err := e.hc.Subscribe(ctx, hsm.Subscription{Subscriber: "bss@ncn-m001", Url: callback, States: []string{"Ready"}}); err != nil {
		t.Fatal(err)
	}

	e.hold(t, callback)
	e.checked(t)
	first := e.only(t, want)
	if got := e.heldSince(); !cmp.Equal(got, []bool{true}) {
		t.Errorf("held reported %v, want [true]", got)
	}

	e.step(t)
	if got := e.heldSince(); len(got) != 0 || testutil.ToFloat64(e.restored) != 0 || e.regained.Load() != 0 {
		t.Errorf("a check finding it held reported %v, restored %v, regained %d; want nothing", got,
			testutil.ToFloat64(e.restored), e.regained.Load())
	}

	if err := e.hc.Unsubscribe(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	e.step(t)
	e.only(t, want)
	if got := e.heldSince(); !cmp.Equal(got, []bool{false, true}) {
		t.Errorf("after a DELETE, held reported %v, want [false true]", got)
	}

	sub := e.only(t, want)
	if err := e.hc.PatchSubscription(ctx, sub.ID, hsm.SubscriptionPatch{Op: "replace", States: &[]string{"Ready"}}); err != nil {
		t.Fatal(err)
	}
	e.step(t)
	if got := e.only(t, want); got.ID != sub.ID {
		t.Errorf("changed subscription %d restored as %d, want it patched back", sub.ID, got.ID)
	}

	e.replaceHSM(t)
	e.step(t)
	e.only(t, want)
	if n := testutil.ToFloat64(e.restored); n != 3 {
		t.Errorf("bss_hsm_subscriptions_restored_total = %v, want 3 (deleted, changed, HSM emptied)", n)
	}
	if n := e.regained.Load(); n != 3 {
		t.Errorf("Regained called %d times, want 3 (deleted, changed, HSM emptied)", n)
	}
}

// TestHoldSeparateInstances: two holders whose callbacks differ only in
// port (two instances of a daemon on one host) keep two subscriptions
// through their checks, instead of taking one from each other.
func TestHoldSeparateInstances(t *testing.T) {
	a, ctx := newHoldEnv(t), t.Context()
	b := &holdEnv{hc: a.hc, ticks: make(chan time.Time), waiting: make(chan time.Duration), held: make(chan bool, 8),
		restored: client.NewRestoredCounter("bss", nil)}
	a.hold(t, "http://127.0.0.1:27778/boot/v1/scn")
	a.checked(t)
	b.hold(t, "http://127.0.0.1:27788/boot/v1/scn")
	b.checked(t)
	for range 2 {
		a.step(t)
		b.step(t)
	}
	subs, err := a.hc.Subscriptions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range subs {
		got[s.Subscriber] = s.Url
	}
	wantSubs := map[string]string{"bss@127.0.0.1:27778": "http://127.0.0.1:27778/boot/v1/scn",
		"bss@127.0.0.1:27788": "http://127.0.0.1:27788/boot/v1/scn"}
	if d := cmp.Diff(wantSubs, got); d != "" || len(subs) != 2 {
		t.Errorf("subscriptions (-want +got):\n%s", d)
	}
	if n := testutil.ToFloat64(a.restored) + testutil.ToFloat64(b.restored); n != 0 {
		t.Errorf("restored %v times, want 0", n)
	}
}
