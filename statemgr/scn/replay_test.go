package scn_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hmsuite/hms/statemgr/hsm"
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
	cursorOf := func(name string) int64 {
		t.Helper()
		sub, err := st.CreateSubscription(ctx, hsm.Subscription{Subscriber: name, Url: srv.URL + "/" + name, States: []string{"Ready"}})
		if err != nil {
			t.Fatal(err)
		}
		cur, err := s.Cursor(ctx, scn.SubCursor(sub.ID))
		if err != nil {
			t.Fatal(err)
		}
		return cur
	}
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
