package heartbeat

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/statemgr"
	"github.com/hmsuite/hms/statemgr/client"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// TestRebootedNodeReadyAgain: a node rebooted faster than Warntime (PCS
// powered it off and on, HSM has it On) goes Ready again at its first
// heartbeat after the reboot, "Heartbeat started" as for a node hbtd
// never heard from, also across a restart of hbtd; SCNs of other states
// change nothing.
func TestRebootedNodeReadyAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "hb.db")
		hsmFake := &fakeHSM{}
		s := startService(t, db, hsmFake)
		const n0, n1 = "x3000c0s1b0n0", "x3000c0s2b0n0"
		started := "Ready/OK/" + MsgStarted + ": "
		beat := func(what string, want ...string) {
			t.Helper()
			now := time.Now().UnixNano()
			s.Tracker.beats([]beat{{name: n0, sent: now}, {name: n1, sent: now}}) // one HSM call for both
			synctest.Wait()
			if d := cmp.Diff(want, hsmFake.takeCalls()); d != "" {
				t.Errorf("%s: HSM calls (-want +got):\n%s", what, d)
			}
		}
		beat("first heartbeats", started+n0+","+n1)

		// n0 reboots: off and on within Warntime, HSM told by PCS.
		s.SCN(hsm.SCN{Components: []string{n0}, State: hsm.StateOff})
		if got := s.Tracker.State(n0); got != Unknown {
			t.Errorf("n0 after an SCN of Off: %v, want unknown", got)
		}
		s.SCN(hsm.SCN{Components: []string{"X3000C0S1B0N0"}, State: hsm.StateOn})
		time.Sleep(2 * time.Second)
		beat("first heartbeat after the reboot", started+n0)

		s.SCN(hsm.SCN{Components: []string{n0, n1}, State: hsm.StateReady})
		s.SCN(hsm.SCN{Components: []string{n0}, State: hsm.StateStandby})
		time.Sleep(2 * time.Second)
		beat("after SCNs of Ready and Standby")

		// Forgotten, then hbtd restarts before the node beats again.
		s.SCN(hsm.SCN{Components: []string{n1}, State: hsm.StateHalt})
		synctest.Wait()
		s.stop(t)
		if got := hsmFake.takeCalls(); len(got) != 0 {
			t.Errorf("HSM told of a forgotten node: %v", got)
		}
		s = startService(t, db, hsmFake)
		defer s.stop(t)
		synctest.Wait()
		if got := hsmFake.takeCalls(); len(got) != 0 {
			t.Errorf("the restarted hbtd sent %v, want nothing", got)
		}
		beat("first heartbeat after hbtd restarted", started+n1)
	})
}

// TestSCNIntake: POST /hmi/v1/scn forgets the nodes an SCN of Off names;
// a body that is not an SCN is a 400 problem.
func TestSCNIntake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := startService(t, filepath.Join(t.TempDir(), "hb.db"), &fakeHSM{})
		defer s.stop(t)
		h := NewAPI(s.Service, nil).Handler()
		mustBeat(t, s.Tracker, "x3000c0s1b0n0")
		for _, tt := range []struct {
			body string
			code int
		}{
			{body: `{"Components":["x3000c0s1b0n0"],"State":"Off","Seq":7}`, code: http.StatusOK},
			{body: `{"Components":"x3000c0s1b0n0"}`, code: http.StatusBadRequest},
		} {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("POST", SCNPath, strings.NewReader(tt.body)))
			if rec.Code != tt.code {
				t.Errorf("POST %s: %d %s, want %d", tt.body, rec.Code, rec.Body, tt.code)
			}
		}
		if got := s.Tracker.State("x3000c0s1b0n0"); got != Unknown {
			t.Errorf("after the SCN: %v, want unknown", got)
		}
	})
}

// TestDaemonSubscribes: hbtd asks HSM for the SCNs of Off, On and Halt
// (those HSM knows), at its own /hmi/v1/scn, as hbtd@<host:port> of it.
func TestDaemonSubscribes(t *testing.T) {
	subs := make(chan hsm.Subscription, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hsm/v2/service/values", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(hsm.Values{State: []string{"Unknown", "Off", "On", "Standby", "Ready"}})
	})
	mux.HandleFunc("GET /hsm/v2/Subscriptions/SCN", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(hsm.SubscriptionList{})
	})
	mux.HandleFunc("POST /hsm/v2/Subscriptions/SCN", func(w http.ResponseWriter, r *http.Request) {
		var sub hsm.Subscription
		_ = json.NewDecoder(r.Body).Decode(&sub)
		subs <- sub
		_ = json.NewEncoder(w).Encode(sub)
	})
	fake := httptest.NewServer(mux)
	defer fake.Close()
	d, err := StartDaemon(t.Context(), "127.0.0.1:0", Options{DBPath: filepath.Join(t.TempDir(), "hb.db"), HSMURL: fake.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	sub := <-subs
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want := "hbtd@" + strings.TrimPrefix(d.URL(), "http://")
	if sub.Subscriber != want || sub.Url != d.URL()+SCNPath {
		t.Errorf("subscription %q at %q, want %s at %q", sub.Subscriber, sub.Url, want, d.URL()+SCNPath)
	}
	if d := cmp.Diff([]string{"Off", "On"}, sub.States); d != "" {
		t.Errorf("states (-want +got):\n%s", d)
	}
}

// realHSM is HSM's API in-process, on SQLite in a test's directory, as
// hbtd's client reaches it. Its reads of State/Components (hbtd's
// catch-ups) fail with 503 while failReads > 0; reads keeps when each came.
type realHSM struct {
	api       http.Handler
	mu        sync.Mutex
	failReads int
	reads     []time.Time
}

// newRealHSM opens HSM's store in dir with nodes ids Ready and returns it
// with hbtd's client of it.
func newRealHSM(t *testing.T, dir string, ids ...string) (*realHSM, *client.Client) {
	t.Helper()
	store, err := statemgr.OpenStore(t.Context(), filepath.Join(dir, "hsm.db"), statemgr.StoreConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	h := &realHSM{api: statemgr.NewAPI(store, slog.New(slog.DiscardHandler), nil).Handler()}
	hc := client.New("http://hsm.test", &http.Client{Transport: handlerTransport{h}}, "hbtd")
	comps := make([]hsm.Component, len(ids))
	for i, id := range ids {
		comps[i] = hsm.Component{ID: id, Type: "Node", State: hsm.StateReady}
	}
	if err := hc.PostComponents(t.Context(), comps, false); err != nil {
		t.Fatal(err)
	}
	return h, hc
}

func (h *realHSM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/hsm/v2/State/Components" {
		h.mu.Lock()
		h.reads = append(h.reads, time.Now())
		fail := h.failReads > 0
		if fail {
			h.failReads--
		}
		h.mu.Unlock()
		if fail {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
	}
	h.api.ServeHTTP(w, r)
}

func (h *realHSM) failNext(n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failReads = n
}

// readsSince returns when the reads came, as durations since t0.
func (h *realHSM) readsSince(t0 time.Time) []time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]time.Duration, len(h.reads))
	for i, r := range h.reads {
		out[i] = r.Sub(t0)
	}
	return out
}

// subscribe runs s.Subscribe with hc until the test ends or the returned
// func is called.
func subscribe(t *testing.T, s *testService, hc *client.Client) (stop func()) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); s.Subscribe(ctx, hc, "http://hbtd.test"+SCNPath, nil) }()
	stop = sync.OnceFunc(func() { cancel(); <-done })
	t.Cleanup(stop)
	return stop
}

// loseSubscription deletes hbtd's subscription, as HSM dropping it or
// restarting on an empty database does, and has n0 rebooted meanwhile:
// Off then On, SCNs hbtd does not get.
func loseSubscription(t *testing.T, hc *client.Client, n0 string) {
	t.Helper()
	subs, err := hc.Subscriptions(t.Context())
	if err != nil || len(subs) != 1 {
		t.Fatalf("HSM's subscriptions: %v %v, want hbtd's", subs, err)
	}
	if err := hc.Unsubscribe(t.Context(), subs[0].ID); err != nil {
		t.Fatal(err)
	}
	for _, state := range []string{hsm.StateOff, hsm.StateOn} {
		if err := hc.StateData(t.Context(), n0, state, "", false); err != nil {
			t.Fatal(err)
		}
	}
}

// beater beats nodes to s's tracker and checks what it told HSM.
func beater(t *testing.T, s *testService, nodes ...string) func(what string, want ...string) {
	return func(what string, want ...string) {
		t.Helper()
		now := time.Now().UnixNano()
		bs := make([]beat, len(nodes))
		for i, n := range nodes {
			bs[i] = beat{name: n, sent: now}
		}
		s.Tracker.beats(bs)
		synctest.Wait()
		if d := cmp.Diff(want, s.hsm.takeCalls()); d != "" {
			t.Errorf("%s: HSM calls (-want +got):\n%s", what, d)
		}
	}
}

// TestRestoredSubscriptionCatchesUp: HSM lost hbtd's subscription (here
// deleted; HSM restarted on an empty database is the same to hbtd) while
// a node rebooted, so the SCNs of its Off and On never came. The check
// that finds the subscription gone subscribes again and forgets the
// nodes HSM has Off, On or Halt: the rebooted node's next heartbeat
// makes it Ready; a node HSM has Ready is kept.
func TestRestoredSubscriptionCatchesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		const n0, n1 = "x3000c0s1b0n0", "x3000c0s2b0n0"
		_, hc := newRealHSM(t, dir, n0, n1)
		s := startService(t, filepath.Join(dir, "hb.db"), &fakeHSM{}) // the fake takes hbtd's state changes
		defer s.stop(t)
		subscribe(t, s, hc)
		beat := beater(t, s, n0, n1)
		beat("first heartbeats", "Ready/OK/"+MsgStarted+": "+n0+","+n1)

		loseSubscription(t, hc, n0)
		for range 29 { // the nodes beat on until hbtd's next check, a minute after its first
			time.Sleep(2 * time.Second)
			beat("heartbeats before the check")
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if subs, err := hc.Subscriptions(t.Context()); err != nil || len(subs) != 1 {
			t.Fatalf("HSM's subscriptions after the check: %v %v, want hbtd's again", subs, err)
		}
		beat("first heartbeat after the restore", "Ready/OK/"+MsgStarted+": "+n0)
	})
}

// TestCatchUpRetried: a catch-up HSM does not answer (503: busy,
// restarting) is retried, 1 s after, then 2 s, 4 s..., until HSM answers;
// the rebooted node is made Ready at its first heartbeat after that. A
// restore while a catch-up is being retried has it tried at once, its
// backoff from 1 s again.
func TestCatchUpRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		const n0, n1 = "x3000c0s1b0n0", "x3000c0s2b0n0"
		h, hc := newRealHSM(t, dir, n0, n1)
		s := startService(t, filepath.Join(dir, "hb.db"), &fakeHSM{})
		defer s.stop(t)
		t0 := time.Now()
		subscribe(t, s, hc)
		beat := beater(t, s, n0, n1)
		beat("first heartbeats", "Ready/OK/"+MsgStarted+": "+n0+","+n1)

		loseSubscription(t, hc, n0)
		h.failNext(3)
		// The check a minute after the first restores the subscription;
		// its catch-up fails at 60 s, 61 s and 63 s and succeeds at 67 s.
		for range 33 {
			time.Sleep(2 * time.Second)
			beat("heartbeats before HSM answers a catch-up")
		}
		time.Sleep(2 * time.Second)
		beat("first heartbeat after the catch-up", "Ready/OK/"+MsgStarted+": "+n0)
		want := []time.Duration{0, 60 * time.Second, 61 * time.Second, 63 * time.Second, 67 * time.Second}
		if d := cmp.Diff(want, h.readsSince(t0)); d != "" {
			t.Fatalf("catch-up reads (-want +got):\n%s", d)
		}

		// Lost again, found at 120 s: its catch-up is retried (HSM fails
		// its next 8 reads) until the next restore, found at 180 s, which
		// reads at once and backs off from 1 s again.
		loseSubscription(t, hc, n0)
		h.failNext(8)
		time.Sleep(150*time.Second - time.Since(t0))
		loseSubscription(t, hc, n0)
		time.Sleep(183*time.Second - time.Since(t0))
		synctest.Wait()
		want = append(want, 120*time.Second, 121*time.Second, 123*time.Second, 127*time.Second, 135*time.Second,
			151*time.Second, 180*time.Second, 181*time.Second, 183*time.Second)
		if d := cmp.Diff(want, h.readsSince(t0)); d != "" {
			t.Errorf("catch-up reads through two restores (-want +got):\n%s", d)
		}
	})
}

// TestStartCatchesUp: hbtd was down while HSM lost its subscription (it
// dropped it, or restarted on an empty database) and a node rebooted and
// another was powered off: the SCNs went nowhere. Once HSM holds the
// subscription of the restarted hbtd, hbtd forgets the nodes HSM has Off,
// On or Halt, as their SCNs would have had it: the rebooted node is made
// Ready at its next heartbeat, instead of staying On, and the one powered
// off is not declared dead over its Off.
func TestStartCatchesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		db := filepath.Join(dir, "hb.db")
		const n0, n1 = "x3000c0s1b0n0", "x3000c0s2b0n0"
		_, hc := newRealHSM(t, dir, n0, n1)
		hsmFake := &fakeHSM{}
		s := startService(t, db, hsmFake)
		stop := subscribe(t, s, hc)
		beater(t, s, n0, n1)("first heartbeats", "Ready/OK/"+MsgStarted+": "+n0+","+n1)
		stop()
		s.stop(t)

		loseSubscription(t, hc, n0)
		if err := hc.StateData(t.Context(), n1, hsm.StateOff, "", false); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)

		s = startService(t, db, hsmFake)
		defer s.stop(t)
		subscribe(t, s, hc)
		synctest.Wait()
		beat := beater(t, s, n0)
		beat("first heartbeat after hbtd restarted", "Ready/OK/"+MsgStarted+": "+n0)
		for range (testErr + 2*time.Second) / (2 * time.Second) {
			time.Sleep(2 * time.Second)
			beat("heartbeats of n0 while n1 is off")
		}
	})
}
