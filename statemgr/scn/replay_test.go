package scn_test

import (
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/statemgr/component"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
	"github.com/hmsuite/hms/statemgr/scn"
)

// TestNewDatabaseReplay: hsm restarted on an empty database holds no
// subscription until each daemon's next check; a daemon (agent@host:port)
// that subscribes again in the database's first NewDatabaseReplay gets
// the SCNs committed before it did, which compaction keeps meanwhile.
// Other subscribers, and daemons after the window, start at the newest
// SCN, as before.
func TestNewDatabaseReplay(t *testing.T) {
	clock, s, comps := clockedStore(t)
	ctx, st := t.Context(), scn.NewStore(s)
	setReady(t, s, hsmtest.IDsOf(comps)) // committed while no one subscribed
	rows, err := s.OutboxAfter(ctx, 0, 10)
	if err != nil || len(rows) == 0 {
		t.Fatalf("outbox rows %v, %v; want the Ready SCN", rows, err)
	}
	newest := rows[len(rows)-1].Seq
	// The bus has taken everything: compaction would delete it all.
	if err := s.SetCursor(ctx, "bus", newest); err != nil {
		t.Fatal(err)
	}
	relay := scn.NewRelay(st, scn.RelayConfig{After: never})
	clock.Add(90 * time.Second) // the daemon's minute check, plus a retry
	relay.Compact(ctx)
	if n, _ := s.OutboxLen(ctx); n == 0 {
		t.Fatal("compaction in the replay window deleted the SCNs a returning daemon needs")
	}

	sink := &scnSink{want: len(comps), done: make(chan struct{})}
	srv := httptest.NewServer(sink)
	t.Cleanup(srv.Close)
	cursorOf := func(name string) int64 { return subscribeReady(t, s, name, srv.URL+"/"+name) }
	if cur := cursorOf("hmnfd-pod_1"); cur != newest {
		t.Errorf("a foreign subscriber starts at seq %d, want after the newest, %d", cur, newest)
	}
	if cur := cursorOf("bss@ncn-m001:27778"); cur != 0 {
		t.Errorf("a daemon subscribing again in the window starts at seq %d, want 0 (the database's first SCN)", cur)
	}
	runRelay(t, s, scn.RelayConfig{After: never})
	waitFor(t, sink.done, "the SCN committed before the daemon subscribed again")

	clock.Add(scn.NewDatabaseReplay)
	if cur := cursorOf("hbtd@ncn-m001:28500"); cur != newest {
		t.Errorf("a daemon subscribing after the window starts at seq %d, want after the newest, %d", cur, newest)
	}
}

// subscribeReady subscribes name at url to Ready SCNs and returns where
// its outbox cursor starts.
func subscribeReady(t *testing.T, s *core.Store, name, url string) int64 {
	t.Helper()
	sub, err := scn.NewStore(s).CreateSubscription(t.Context(), hsm.Subscription{Subscriber: name, Url: url, States: []string{"Ready"}})
	if err != nil {
		t.Fatal(err)
	}
	cur, err := s.Cursor(t.Context(), scn.SubCursor(sub.ID))
	if err != nil {
		t.Fatal(err)
	}
	return cur
}

// TestMovedDaemonGetsItsGap: a daemon moved to another port subscribes
// anew; its subscription starts at its old port's cursor, so it gets the
// SCNs committed between its stop and its new subscription, in order,
// which compaction kept for the old one meanwhile. A new subscription of
// another agent on that host, of that agent on another host, or of a
// name without a port starts at the newest SCN, as before.
func TestMovedDaemonGetsItsGap(t *testing.T) { pg.EachDB(t, testMovedDaemonGetsItsGap) }

func testMovedDaemonGetsItsGap(t *testing.T, db testpeer.DB) {
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s, _ := hsmtest.NewStoreOn(t, db, core.Config{Now: clock.Now})
	ctx, st := t.Context(), scn.NewStore(s)
	comps := hsmtest.Nodes(3, 1)
	if err := component.NewStore(s).UpsertComponents(ctx, comps, false, nil); err != nil {
		t.Fatal(err)
	}
	clock.Add(scn.NewDatabaseReplay) // not a new database's replay
	// The daemon on its old port, since stopped; then the SCNs of its gap.
	oldCur := subscribeReady(t, s, "bss@ncn-m001:27778", "http://127.0.0.1:1/boot/v1/scn")
	setReady(t, s, []string{comps[0].ID})
	setReady(t, s, []string{comps[1].ID})
	rows, err := s.OutboxAfter(ctx, 0, 10)
	if err != nil || len(rows) != 2 {
		t.Fatalf("outbox rows %v, %v; want the two Ready SCNs", rows, err)
	}
	newest := rows[1].Seq
	if err := s.SetCursor(ctx, "bus", newest); err != nil {
		t.Fatal(err)
	}
	scn.NewRelay(st, scn.RelayConfig{After: never}).Compact(ctx)
	if n, _ := s.OutboxLen(ctx); n != 2 {
		t.Fatalf("outbox holds %d rows after compaction, want the 2 the old port's subscription has not taken", n)
	}

	names := []string{"bss@ncn-m001:27779", "bss@ncn-m002:27779", "hbtd@ncn-m001:28500", "bss@ncn-m001"}
	sinks := map[string]*scnSink{}
	got := map[string]int64{}
	for i, name := range names {
		want := 1
		if i == 0 {
			want = 3
		}
		sinks[name] = &scnSink{want: want, done: make(chan struct{})}
		srv := httptest.NewServer(sinks[name])
		t.Cleanup(srv.Close)
		got[name] = subscribeReady(t, s, name, srv.URL)
	}
	wantCur := map[string]int64{"bss@ncn-m001:27779": oldCur, "bss@ncn-m002:27779": newest,
		"hbtd@ncn-m001:28500": newest, "bss@ncn-m001": newest}
	if diff := cmp.Diff(wantCur, got); diff != "" {
		t.Fatalf("new subscriptions' cursors (-want +got):\n%s", diff)
	}

	runRelay(t, s, scn.RelayConfig{After: never, Log: slog.New(slog.DiscardHandler)})
	setReady(t, s, []string{comps[2].ID})
	for _, name := range names {
		waitFor(t, sinks[name].done, name+"'s SCNs")
		want := [][]string{{comps[2].ID}}
		if name == names[0] {
			want = [][]string{{comps[0].ID}, {comps[1].ID}, {comps[2].ID}}
		}
		sink := sinks[name]
		var received [][]string
		sink.mu.Lock()
		for _, c := range sink.got {
			received = append(received, c.Components)
		}
		sink.mu.Unlock()
		if diff := cmp.Diff(want, received); diff != "" {
			t.Errorf("%s received (-want +got):\n%s", name, diff)
		}
	}
}

// TestMovedDaemonStartsInOutbox: a moved daemon's cursor starts no earlier
// than the oldest SCN the outbox still holds (its old port's cursor is
// behind rows expired since), and where any new subscription starts when
// the outbox is empty.
func TestMovedDaemonStartsInOutbox(t *testing.T) {
	clock, s, comps := clockedStore(t)
	ctx, st := t.Context(), scn.NewStore(s)
	clock.Add(scn.NewDatabaseReplay)
	relay := scn.NewRelay(st, scn.RelayConfig{After: never})
	cursorOf := func(name string) int64 { return subscribeReady(t, s, name, "http://127.0.0.1:1/"+name) }
	set := func(state string) int64 {
		t.Helper()
		if _, err := component.NewStore(s).UpdateState(ctx, hsmtest.IDsOf(comps), component.StateUpdate{State: state, Force: true}); err != nil {
			t.Fatal(err)
		}
		rows, err := s.OutboxAfter(ctx, 0, 10)
		if err != nil || len(rows) == 0 {
			t.Fatalf("outbox rows %v, %v; want the %s SCN", rows, err, state)
		}
		return rows[len(rows)-1].Seq
	}
	old := cursorOf("bss@ncn-m001:27778")
	set("Ready")
	clock.Add(25 * time.Hour) // beyond the retention: compaction expires it
	relay.Compact(ctx)
	kept := set("Standby")
	if cur := cursorOf("bss@ncn-m001:27779"); cur != kept-1 {
		t.Errorf("moved daemon starts at seq %d, want %d, before the outbox's oldest SCN (its old port's cursor is %d)", cur, kept-1, old)
	}
	clock.Add(25 * time.Hour)
	relay.Compact(ctx)
	if n, _ := s.OutboxLen(ctx); n != 0 {
		t.Fatalf("outbox holds %d rows, want none", n)
	}
	if cur, want := cursorOf("bss@ncn-m001:27780"), cursorOf("hmnfd-pod_1"); cur != want {
		t.Errorf("moved daemon starts at seq %d with an empty outbox, want %d, where any new subscription starts", cur, want)
	}
}
