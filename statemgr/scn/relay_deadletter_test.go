package scn_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
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

// scnSink is a subscriber that answers its first POST with status (0: 200)
// and records every SCN it accepts; done is closed once it holds want
// components.
type scnSink struct {
	mu     sync.Mutex
	status int
	got    []hsm.SCN
	comps  int
	want   int
	done   chan struct{}
}

func (s *scnSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.status != 0 {
		w.WriteHeader(s.status)
		s.status = 0
		return
	}
	var scn hsm.SCN
	if err := json.NewDecoder(r.Body).Decode(&scn); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	s.got = append(s.got, scn)
	if s.comps += len(scn.Components); s.comps == s.want {
		close(s.done)
	}
}

// runRelayTo runs a relay over s, with retries that do not wait, delivering
// to a new subscription of sink for the given states; it returns when the
// test ends.
func runRelayTo(t *testing.T, s *core.Store, sink http.Handler, states ...string) *scn.Relay {
	t.Helper()
	srv := httptest.NewServer(sink)
	t.Cleanup(srv.Close)
	now := func(time.Duration) <-chan time.Time {
		ch := make(chan time.Time, 1)
		ch <- time.Time{}
		return ch
	}
	relay := scn.NewRelay(scn.NewStore(s), scn.RelayConfig{After: now, CompactEvery: time.Hour, Log: slog.New(slog.DiscardHandler)})
	if _, err := scn.NewStore(s).CreateSubscription(t.Context(), hsm.Subscription{Subscriber: "sink", Url: srv.URL, States: states}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	done := make(chan struct{})
	go func() { defer close(done); _ = relay.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return relay
}

// TestRelayDeadLetters: an SCN a subscriber refuses for good (4xx other
// than 408/429) is set aside - stored, listed at
// /Subscriptions/SCN/deadletters, counted - and later SCNs are delivered;
// one answered 408, 429 or 5xx is retried until the subscriber takes it.
func TestRelayDeadLetters(t *testing.T) { pg.EachDB(t, testRelayDeadLetters) }

func testRelayDeadLetters(t *testing.T, db testpeer.DB) {
	for _, tc := range []struct {
		status int
		dead   bool
	}{
		{status: http.StatusRequestEntityTooLarge, dead: true},
		{status: http.StatusBadRequest, dead: true},
		{status: http.StatusRequestTimeout},
		{status: http.StatusTooManyRequests},
		{status: http.StatusBadGateway},
	} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			s, _ := hsmtest.NewStoreOn(t, db, core.Config{})
			ctx := t.Context()
			comps := hsmtest.Nodes(3, 1)
			if err := component.NewStore(s).UpsertComponents(ctx, comps, false, nil); err != nil {
				t.Fatal(err)
			}
			want := 3
			if tc.dead {
				want = 2
			}
			sink := &scnSink{status: tc.status, want: want, done: make(chan struct{})}
			relay := runRelayTo(t, s, sink, "Ready")
			for _, c := range comps {
				if _, err := component.NewStore(s).UpdateState(ctx, []string{c.ID}, component.StateUpdate{State: "Ready", Force: true}); err != nil {
					t.Fatal(err)
				}
			}
			waitFor(t, sink.done, "the SCNs after the refused one")

			sink.mu.Lock()
			var got []string
			for _, scn := range sink.got {
				got = append(got, scn.Components...)
			}
			sink.mu.Unlock()
			wantIDs := hsmtest.IDsOf(comps)
			if tc.dead {
				wantIDs = wantIDs[1:]
			}
			if diff := cmp.Diff(wantIDs, got); diff != "" {
				t.Errorf("subscriber got (-want +got):\n%s", diff)
			}
			a := hsmtest.Serve(t, s)
			var list hsm.DeadLetterList
			if err := json.Unmarshal(a.Must(200, "GET", "/Subscriptions/SCN/deadletters", nil), &list); err != nil {
				t.Fatal(err)
			}
			wantDead := 0
			if tc.dead {
				wantDead = 1
			}
			if len(list.DeadLetters) != wantDead {
				t.Fatalf("dead letters %+v; want %d", list.DeadLetters, wantDead)
			}
			if tc.dead {
				d := list.DeadLetters[0]
				if n := counterValue(relay.DeadLetters(d.Subscriber)); n != 1 {
					t.Errorf("hsm_scn_dead_letters_total = %v, want 1", n)
				}
				var scn hsm.SCN
				if err := json.Unmarshal(d.SCN, &scn); err != nil || d.Subscriber != "sink" ||
					!slices.Equal(scn.Components, hsmtest.IDsOf(comps[:1])) || d.Seq != scn.Seq || d.Epoch != s.Epoch {
					t.Errorf("dead letter %+v (SCN %+v, %v); want the first SCN, to sink", d, scn, err)
				}
				// Deleted once dealt with: a wrong id is refused, the right
				// one goes, a second delete finds nothing.
				path := "/Subscriptions/SCN/deadletters/" + strconv.FormatInt(d.ID, 10)
				a.Must(400, "DELETE", "/Subscriptions/SCN/deadletters/x", nil)
				a.Must(404, "DELETE", "/Subscriptions/SCN/deadletters/"+strconv.FormatInt(d.ID+1, 10), nil)
				a.Must(204, "DELETE", path, nil)
				a.Must(404, "DELETE", path, nil)
				if err := json.Unmarshal(a.Must(200, "GET", "/Subscriptions/SCN/deadletters", nil), &list); err != nil || len(list.DeadLetters) != 0 {
					t.Errorf("after the delete: %+v, %v", list.DeadLetters, err)
				}
			}
			a.Must(204, "DELETE", "/Subscriptions/SCN/deadletters", nil)
		})
	}
}

// TestBulkChangeSplitsSCNs: a bulk change of more than scnMaxComponents
// components is sent as several SCNs of at most that many, with consecutive
// Seqs, that together carry every component in order.
func TestBulkChangeSplitsSCNs(t *testing.T) { pg.EachDB(t, testBulkChangeSplitsSCNs) }

func testBulkChangeSplitsSCNs(t *testing.T, db testpeer.DB) {
	s, _ := hsmtest.NewStoreOn(t, db, core.Config{})
	ctx := t.Context()
	comps := hsmtest.Nodes(2*core.SCNMaxComponents+500, 1)
	if err := component.NewStore(s).UpsertComponents(ctx, comps, false, nil); err != nil {
		t.Fatal(err)
	}
	sink := &scnSink{want: len(comps), done: make(chan struct{})}
	runRelayTo(t, s, sink, "Ready")
	if _, err := component.NewStore(s).UpdateState(ctx, hsmtest.IDsOf(comps), component.StateUpdate{State: "Ready", Force: true}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, sink.done, "every component of the bulk change")
	sink.mu.Lock()
	defer sink.mu.Unlock()
	var got []string
	var sizes []int
	for i, scn := range sink.got {
		got = append(got, scn.Components...)
		sizes = append(sizes, len(scn.Components))
		if i > 0 && scn.Seq != sink.got[i-1].Seq+1 {
			t.Errorf("SCN %d has Seq %d after %d; want consecutive", i, scn.Seq, sink.got[i-1].Seq)
		}
		if scn.State != "Ready" || !scn.Timestamp.Equal(sink.got[0].Timestamp) {
			t.Errorf("SCN %d: State %q Timestamp %v; want Ready at the change's time", i, scn.State, scn.Timestamp)
		}
	}
	if diff := cmp.Diff([]int{core.SCNMaxComponents, core.SCNMaxComponents, 500}, sizes); diff != "" {
		t.Errorf("SCN sizes (-want +got):\n%s", diff)
	}
	if !slices.Equal(hsmtest.IDsOf(comps), got) {
		t.Errorf("components arrived out of order or incomplete (%d of %d)", len(got), len(comps))
	}
}
