package heartbeat

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
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

// TestRestoredSubscriptionCatchesUp: HSM lost hbtd's subscription (here
// deleted; HSM restarted on an empty database is the same to hbtd) while
// a node rebooted, so the SCNs of its Off and On never came. The check
// that finds the subscription gone subscribes again and forgets the
// nodes HSM has Off, On or Halt: the rebooted node's next heartbeat
// makes it Ready; a node HSM has Ready is kept.
func TestRestoredSubscriptionCatchesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		store, err := statemgr.OpenStore(t.Context(), filepath.Join(dir, "hsm.db"), statemgr.StoreConfig{})
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		hc := client.New("http://hsm.test", &http.Client{Transport: handlerTransport{statemgr.NewAPI(store, slog.New(slog.DiscardHandler), nil).Handler()}}, "hbtd")
		const n0, n1 = "x3000c0s1b0n0", "x3000c0s2b0n0"
		if err := hc.PostComponents(t.Context(), []hsm.Component{{ID: n0, Type: "Node", State: hsm.StateReady},
			{ID: n1, Type: "Node", State: hsm.StateReady}}, false); err != nil {
			t.Fatal(err)
		}
		hsmFake := &fakeHSM{} // takes hbtd's state changes
		s := startService(t, filepath.Join(dir, "hb.db"), hsmFake)
		defer s.stop(t)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); s.Subscribe(ctx, hc, "http://hbtd.test"+SCNPath, nil) }()
		defer func() { cancel(); <-done }()
		beat := func(what string, want ...string) {
			t.Helper()
			now := time.Now().UnixNano()
			s.Tracker.beats([]beat{{name: n0, sent: now}, {name: n1, sent: now}})
			synctest.Wait()
			if d := cmp.Diff(want, hsmFake.takeCalls()); d != "" {
				t.Errorf("%s: HSM calls (-want +got):\n%s", what, d)
			}
		}
		beat("first heartbeats", "Ready/OK/"+MsgStarted+": "+n0+","+n1)

		subs, err := hc.Subscriptions(t.Context())
		if err != nil || len(subs) != 1 {
			t.Fatalf("HSM's subscriptions: %v %v, want hbtd's", subs, err)
		}
		if err := hc.Unsubscribe(t.Context(), subs[0].ID); err != nil {
			t.Fatal(err)
		}
		for _, state := range []string{hsm.StateOff, hsm.StateOn} { // n0 reboots; no SCN reaches hbtd
			if err := hc.StateData(t.Context(), n0, state, "", false); err != nil {
				t.Fatal(err)
			}
		}
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
