package heartbeat

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/bus"
)

// testService is a Service running in the current bubble, with a fake HSM
// reached through an in-process transport and an in-memory bus.
type testService struct {
	*Service
	hsm    *fakeHSM
	bus    *bus.Memory
	cancel context.CancelFunc
	done   chan error
}

func startService(t *testing.T, dbPath string, hsm *fakeHSM) *testService {
	t.Helper()
	mem := bus.NewMemory()
	svc, err := New(t.Context(), Options{
		DBPath: dbPath, HSMURL: "http://hsm.test", Publisher: mem,
		HTTPClient: &http.Client{Transport: handlerTransport{hsm}},
		Warntime:   testWarn, Errtime: testErr, Port: "28500",
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	ts := &testService{Service: svc, hsm: hsm, bus: mem, cancel: cancel, done: make(chan error, 1)}
	go func() { ts.done <- svc.Run(ctx) }()
	return ts
}

// stop shuts the service down the way main does and closes its database.
func (s *testService) stop(t *testing.T) {
	t.Helper()
	s.cancel()
	if err := <-s.done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestHSMDownThenUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hsm := &fakeHSM{down: true}
		s := startService(t, filepath.Join(t.TempDir(), "hb.db"), hsm)
		defer s.stop(t)
		for _, n := range []string{"x0c0s0b0n0", "x0c0s0b0n1", "x0c0s0b0n2"} {
			mustBeat(t, s.Tracker, n)
		}
		// n0 keeps beating, n1 and n2 go silent and die while HSM is down.
		for range 12 {
			time.Sleep(3 * time.Second)
			mustBeat(t, s.Tracker, "x0c0s0b0n0")
		}
		synctest.Wait()
		if got := hsm.takeCalls(); len(got) != 0 {
			t.Fatalf("HSM down, yet calls were recorded: %v", got)
		}
		if hsm.fails < 2 {
			t.Fatalf("HSM saw %d attempts while down, want retries", hsm.fails)
		}
		hsm.setDown(false)
		for range 11 { // the backoff may have reached maxBackoff
			time.Sleep(3 * time.Second)
			mustBeat(t, s.Tracker, "x0c0s0b0n0")
		}
		synctest.Wait()
		want := []string{
			"Ready/OK/" + MsgStarted + ": x0c0s0b0n0",
			"Standby/Alert/" + MsgDead + ": x0c0s0b0n1,x0c0s0b0n2",
		}
		if diff := cmp.Diff(want, hsm.takeCalls()); diff != "" {
			t.Fatalf("calls once HSM is back (-want +got):\n%s", diff)
		}
		if n := s.HSM.Pending(); n != 0 {
			t.Fatalf("%d changes still pending", n)
		}
	})
}

func TestBusNotifications(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := startService(t, filepath.Join(t.TempDir(), "hb.db"), &fakeHSM{})
		defer s.stop(t)
		sent := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
		if err := s.Tracker.Beat("x3000c0s7b0n1", sent); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		got := make(chan []bus.Message, 1)
		ctx, cancel := context.WithCancel(t.Context())
		go s.bus.Consume(ctx, bus.TopicHeartbeat, "test", func(_ context.Context, ms []bus.Message) error {
			got <- ms
			return nil
		})
		ms := <-got
		cancel()
		var m BusMessage
		if err := json.Unmarshal(ms[0].Value, &m); err != nil {
			t.Fatal(err)
		}
		want := BusMessage{MessageID: "Heartbeat Change Notification", ID: "x3000c0s7b0n1", NewState: "Ready",
			NewFlag: "OK", LastHBTimeStamp: "2026-11-21T12:00:00Z", Info: MsgStarted}
		if diff := cmp.Diff(want, m); diff != "" {
			t.Fatalf("bus message (-want +got):\n%s", diff)
		}
		if string(ms[0].Key) != "x3000c0s7b0n1" {
			t.Fatalf("key %q, want the xname", ms[0].Key)
		}
	})
}

// TestRestartWithGap restarts the tracker after five minutes down: the nodes
// that were alive get Errtime of grace, those that beat again stay Ready without
// any notification, and only the one that stays silent is declared dead.
func TestRestartWithGap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "hb.db")
		hsm := &fakeHSM{}
		s := startService(t, db, hsm)
		for _, n := range []string{"x0c0s0b0n0", "x0c0s0b0n1", "x0c0s0b0n2"} {
			mustBeat(t, s.Tracker, n)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		hsm.takeCalls()
		s.stop(t)

		time.Sleep(5 * time.Minute)
		s = startService(t, db, hsm)
		defer s.stop(t)
		if diff := cmp.Diff([4]int{Alive: 3}, s.Tracker.Counts()); diff != "" {
			t.Fatalf("restored counts (-want +got):\n%s", diff)
		}
		for range 11 { // n0 and n1 come back; n2 stays silent
			mustBeat(t, s.Tracker, "x0c0s0b0n0")
			mustBeat(t, s.Tracker, "x0c0s0b0n1")
			time.Sleep(3 * time.Second)
		}
		synctest.Wait()
		want := []string{"Ready/Warning/" + MsgWarning + ": x0c0s0b0n2", "Standby/Alert/" + MsgDead + ": x0c0s0b0n2"}
		if diff := cmp.Diff(want, hsm.takeCalls()); diff != "" {
			t.Fatalf("calls after the restart (-want +got):\n%s", diff)
		}
		if gaps := testutilCount(t, s.Tracker); gaps != 1 {
			t.Fatalf("gaps counted %v, want 1", gaps)
		}
	})
}

// TestRestartKeepsDeadAndWarned checks states survive a restart: a dead node
// that beats again is "restarted", not "started".
func TestRestartKeepsDead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "hb.db")
		hsm := &fakeHSM{}
		s := startService(t, db, hsm)
		mustBeat(t, s.Tracker, "x0c0s0b0n0")
		time.Sleep(testErr + time.Second)
		synctest.Wait()
		s.stop(t)
		hsm.takeCalls()

		s = startService(t, db, hsm)
		defer s.stop(t)
		if got := s.Tracker.State("x0c0s0b0n0"); got != Dead {
			t.Fatalf("restored state %v, want dead", got)
		}
		mustBeat(t, s.Tracker, "x0c0s0b0n0")
		time.Sleep(time.Second)
		synctest.Wait()
		if diff := cmp.Diff([]string{"Ready/OK/" + MsgRestarted + ": x0c0s0b0n0"}, hsm.takeCalls()); diff != "" {
			t.Fatalf("calls (-want +got):\n%s", diff)
		}
	})
}

// TestRestartResendsUnconfirmed: transitions HSM had not taken when hbtd
// stopped are sent once hbtd runs again; confirmed ones are not repeated.
func TestRestartResendsUnconfirmed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "hb.db")
		hsm := &fakeHSM{}
		s := startService(t, db, hsm)
		mustBeat(t, s.Tracker, "x0c0s0b0n2") // confirmed before HSM goes down
		time.Sleep(time.Second)
		synctest.Wait()
		if got := hsm.takeCalls(); len(got) != 1 {
			t.Fatalf("calls before HSM went down: %v", got)
		}
		hsm.setDown(true)
		mustBeat(t, s.Tracker, "x0c0s0b0n0")
		mustBeat(t, s.Tracker, "x0c0s0b0n1")
		for range 12 { // n1 dies while HSM is down; n0 and n2 keep beating
			time.Sleep(3 * time.Second)
			mustBeat(t, s.Tracker, "x0c0s0b0n0")
			mustBeat(t, s.Tracker, "x0c0s0b0n2")
		}
		synctest.Wait()
		s.stop(t) // the last attempt at shutdown fails too
		if n := len(hsm.takeCalls()); n != 0 {
			t.Fatalf("HSM down, yet %d calls recorded", n)
		}

		hsm.setDown(false)
		s = startService(t, db, hsm)
		defer s.stop(t)
		time.Sleep(time.Second)
		synctest.Wait()
		want := []string{
			"Ready/OK/" + MsgStarted + ": x0c0s0b0n0",
			"Standby/Alert/" + MsgDead + ": x0c0s0b0n1",
		}
		if diff := cmp.Diff(want, hsm.takeCalls()); diff != "" {
			t.Fatalf("calls after the restart (-want +got):\n%s", diff)
		}
		recs, err := s.Store.Load(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if r.PendingHSM || r.PendingBus {
				t.Errorf("%s still pending after delivery: hsm %v, bus %v", r.XName, r.PendingHSM, r.PendingBus)
			}
		}
	})
}

// TestNosmDropsForGood: a transition made while HSM calls are off is
// dropped, as the parameter says, and not sent after a restart either.
func TestNosmDropsForGood(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "hb.db")
		hsm := &fakeHSM{}
		s := startService(t, db, hsm)
		if _, err := s.params.patch(t.Context(), map[string]json.RawMessage{"Nosm": json.RawMessage(`"1"`)}); err != nil {
			t.Fatal(err)
		}
		mustBeat(t, s.Tracker, "x0c0s0b0n0")
		time.Sleep(time.Second)
		synctest.Wait()
		if _, err := s.params.patch(t.Context(), map[string]json.RawMessage{"Nosm": json.RawMessage(`"0"`)}); err != nil {
			t.Fatal(err)
		}
		s.stop(t)

		s = startService(t, db, hsm)
		defer s.stop(t)
		time.Sleep(time.Second)
		synctest.Wait()
		if got := hsm.takeCalls(); len(got) != 0 {
			t.Errorf("calls after the restart: %v; the Nosm-time change was to be dropped", got)
		}
	})
}
