package scn_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/statemgr/component"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
	"github.com/hmsuite/hms/statemgr/scn"
)

// fakeClock is the relay's clock in these tests: a wait shorter than a day
// moves it on and ends at once; a longer one (the compactor's) never ends.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Add moves the clock on by d.
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	if d >= 24*time.Hour {
		return ch
	}
	c.mu.Lock()
	c.t = c.t.Add(d)
	ch <- c.t
	c.mu.Unlock()
	return ch
}

// logSignal is a slog handler that closes a channel when msg is logged.
type logSignal struct {
	slog.Handler
	msg  string
	once sync.Once
	seen chan struct{}
}

func (h *logSignal) Enabled(context.Context, slog.Level) bool { return true }

func (h *logSignal) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.once.Do(func() { close(h.seen) })
	}
	return nil
}

// runRelay runs a relay over s until the test ends.
func runRelay(t *testing.T, s *core.Store, cfg scn.RelayConfig) {
	t.Helper()
	relay := scn.NewRelay(scn.NewStore(s), cfg)
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	done := make(chan struct{})
	go func() { defer close(done); _ = relay.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

func setReady(t *testing.T, s *core.Store, ids []string) {
	t.Helper()
	if _, err := component.NewStore(s).UpdateState(t.Context(), ids, component.StateUpdate{State: "Ready", Force: true}); err != nil {
		t.Fatal(err)
	}
}

// TestMovedSubscriberReplacesItsSubscription: a daemon (agent@host) that
// comes back on another callback URL takes over its subscription - same
// ID, the SCNs the old URL had not taken go to the new one - instead of a
// second one being added while the first retries a dead address. The same
// Url again is still 409, and a Subscriber not of the agent@host form keeps
// HSM's one-subscription-per-POST.
func TestMovedSubscriberReplacesItsSubscription(t *testing.T) {
	pg.EachDB(t, testMovedSubscriberReplacesItsSubscription)
}

func testMovedSubscriberReplacesItsSubscription(t *testing.T, db testpeer.DB) {
	s, _ := hsmtest.NewStoreOn(t, db, core.Config{})
	ctx, st := t.Context(), scn.NewStore(s)
	comps := hsmtest.Nodes(2, 1)
	if err := component.NewStore(s).UpsertComponents(ctx, comps, false, nil); err != nil {
		t.Fatal(err)
	}
	sub := func(name, url string) (hsm.Subscription, error) {
		return st.CreateSubscription(ctx, hsm.Subscription{Subscriber: name, Url: url, States: []string{"Ready"}})
	}
	old, err := sub("bss@ncn-m001", "http://127.0.0.1:1/boot/v1/scn")
	if err != nil {
		t.Fatal(err)
	}
	setReady(t, s, []string{comps[0].ID}) // the old URL never took it

	sink := &scnSink{want: 2, done: make(chan struct{})}
	srv := httptest.NewServer(sink)
	t.Cleanup(srv.Close)
	moved, err := sub("bss@ncn-m001", srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if moved.ID != old.ID {
		t.Errorf("moved subscription ID = %d, want the old one's, %d", moved.ID, old.ID)
	}
	if _, err := sub("bss@ncn-m001", srv.URL); err == nil {
		t.Error("the same Subscriber and Url again: no error, want 409")
	}
	for _, url := range []string{"http://127.0.0.1:1/a", "http://127.0.0.1:1/b"} {
		if _, err := sub("hmnfd-pod_1", url); err != nil {
			t.Fatal(err)
		}
	}
	list, err := st.Subscriptions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, l := range list {
		got[l.Subscriber]++
		if l.Subscriber == "bss@ncn-m001" && l.Url != srv.URL {
			t.Errorf("bss@ncn-m001's Url = %s, want %s", l.Url, srv.URL)
		}
	}
	if got["bss@ncn-m001"] != 1 || got["hmnfd-pod_1"] != 2 {
		t.Errorf("subscriptions per subscriber = %v, want bss@ncn-m001 1, hmnfd-pod_1 2", got)
	}

	runRelay(t, s, scn.RelayConfig{After: never, Log: slog.New(slog.DiscardHandler)})
	setReady(t, s, []string{comps[1].ID})
	waitFor(t, sink.done, "both SCNs at the new URL")
}

// startDeadRelay runs a relay over s on clock, dropping subscriptions
// after 10 min of failures, until the test ends; the returned channel is
// closed when it logs a drop.
func startDeadRelay(t *testing.T, s *core.Store, clock *fakeClock) (*scn.Relay, <-chan struct{}) {
	t.Helper()
	logs := &logSignal{Handler: slog.DiscardHandler, msg: "scn_subscription_dropped", seen: make(chan struct{})}
	relay := scn.NewRelay(scn.NewStore(s), scn.RelayConfig{After: clock.After, DeadAfter: 10 * time.Minute,
		CompactEvery: 48 * time.Hour, Log: slog.New(logs)})
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	done := make(chan struct{})
	go func() { defer close(done); _ = relay.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return relay, logs.seen
}

// clockedStore returns a store on a fake clock holding one node.
func clockedStore(t *testing.T) (*fakeClock, *core.Store, []hsm.Component) {
	t.Helper()
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s, _ := hsmtest.NewStore(t, core.Config{Now: clock.Now})
	comps := hsmtest.Nodes(1, 1)
	if err := component.NewStore(s).UpsertComponents(t.Context(), comps, false, nil); err != nil {
		t.Fatal(err)
	}
	return clock, s, comps
}

// TestDeadSubscriptionDropped: a subscription whose posts have failed,
// without a success, for DeadAfter is deleted with its outbox cursor,
// logged and counted.
func TestDeadSubscriptionDropped(t *testing.T) {
	clock, s, comps := clockedStore(t)
	ctx, st := t.Context(), scn.NewStore(s)
	dead := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(dead.Close)
	sub, err := st.CreateSubscription(ctx, hsm.Subscription{Subscriber: "bss@old-host:27778", Url: dead.URL, States: []string{"Ready"}})
	if err != nil {
		t.Fatal(err)
	}
	relay, dropped := startDeadRelay(t, s, clock)
	setReady(t, s, hsmtest.IDsOf(comps))
	waitFor(t, dropped, "the dead subscription dropped")

	if list, err := st.Subscriptions(ctx); err != nil || len(list) != 0 {
		t.Errorf("subscriptions left = %+v, %v; want none", list, err)
	}
	if _, err := s.Cursor(ctx, scn.SubCursor(sub.ID)); err == nil {
		t.Error("the dropped subscription's outbox cursor is still there")
	}
	if n := counterValue(relay.Dropped()); n != 1 {
		t.Errorf("hsm_scn_subscriptions_dropped_total = %v, want 1", n)
	}
}

// TestForeignDeadSubscriptionKept: a subscriber that does not check its
// subscription (CSM's hmnfd, <pod>_<n>; a script as agent@host) is never
// dropped, however long its posts fail, as in shipped HSM: it would not
// subscribe again once its callback came back.
func TestForeignDeadSubscriptionKept(t *testing.T) {
	for _, name := range []string{"hmnfd-pod_1", "scnfd@sms02.cray.com"} {
		t.Run(name, func(t *testing.T) {
			clock, s, comps := clockedStore(t)
			ctx, st := t.Context(), scn.NewStore(s)
			start := clock.Now()
			past := make(chan struct{})
			var once sync.Once
			dead := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				if clock.Now().Sub(start) > 20*time.Minute { // twice DeadAfter
					once.Do(func() { close(past) })
				}
				w.WriteHeader(http.StatusServiceUnavailable)
			}))
			t.Cleanup(dead.Close)
			if _, err := st.CreateSubscription(ctx, hsm.Subscription{Subscriber: name, Url: dead.URL, States: []string{"Ready"}}); err != nil {
				t.Fatal(err)
			}
			relay, _ := startDeadRelay(t, s, clock)
			setReady(t, s, hsmtest.IDsOf(comps))
			waitFor(t, past, "posts failing for twice DeadAfter")
			if list, err := st.Subscriptions(ctx); err != nil || len(list) != 1 {
				t.Errorf("subscriptions left = %+v, %v; want the failing one", list, err)
			}
			if n := counterValue(relay.Dropped()); n != 0 {
				t.Errorf("hsm_scn_subscriptions_dropped_total = %v, want 0", n)
			}
		})
	}
}

func TestRestores(t *testing.T) {
	for name, want := range map[string]bool{"bss@ncn-m001:27778": true, "hbtd@[fd00::1]:28500": true, "bss@ncn-m001": false,
		"hmnfd-pod_1": false, "@host:80": false, "bss@host:port": false, "bss@host:70000": false} {
		if got := scn.Restores(name); got != want {
			t.Errorf("Restores(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestRecoveredSubscriptionKept: failures that end before DeadAfter (five:
// 1+2+4+8+16 s of backoff) drop nothing; the SCN is delivered.
func TestRecoveredSubscriptionKept(t *testing.T) {
	clock, s, comps := clockedStore(t)
	ctx, st := t.Context(), scn.NewStore(s)
	sink := &scnSink{want: 1, done: make(chan struct{})}
	fails := 5
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sink.mu.Lock()
		if fails > 0 {
			fails--
			sink.mu.Unlock()
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		sink.mu.Unlock()
		sink.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	sub, err := st.CreateSubscription(ctx, hsm.Subscription{Subscriber: "bos@ncn-m002", Url: srv.URL, States: []string{"Ready"}})
	if err != nil {
		t.Fatal(err)
	}
	relay, _ := startDeadRelay(t, s, clock)
	setReady(t, s, hsmtest.IDsOf(comps))
	waitFor(t, sink.done, "the SCN at the recovered subscriber")
	if list, err := st.Subscriptions(ctx); err != nil || len(list) != 1 {
		t.Errorf("subscriptions left = %+v, %v; want %d", list, err, sub.ID)
	}
	if n := counterValue(relay.Dropped()); n != 0 {
		t.Errorf("recovered subscription counted dropped %v times", n)
	}
}
