package scn_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/statemgr/component"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
	"github.com/hmsuite/hms/statemgr/migrations"
	"github.com/hmsuite/hms/statemgr/scn"
)

// recorder is a bus.Publisher that keeps what it is given and can stop the
// relay right after a publish, before the relay records its cursor.
type recorder struct {
	mu          sync.Mutex
	msgs        []bus.Message
	crashAfter  func() // called after a successful publish, if set
	seen        map[string]bool
	want        int
	done        chan struct{}
	publishErrs int // fail this many calls first
}

func newRecorder(want int) *recorder {
	return &recorder{seen: map[string]bool{}, want: want, done: make(chan struct{})}
}

func (r *recorder) Publish(_ context.Context, topic string, msgs ...bus.Message) error {
	r.mu.Lock()
	if r.publishErrs > 0 {
		r.publishErrs--
		r.mu.Unlock()
		return fmt.Errorf("broker down")
	}
	for _, m := range msgs {
		r.msgs = append(r.msgs, m)
		var scn hsm.SCN
		_ = json.Unmarshal(m.Value, &scn)
		r.seen[fmt.Sprintf("%d/%s", scn.Seq, string(m.Key))] = true
	}
	if len(r.seen) >= r.want && r.done != nil {
		close(r.done)
		r.done = nil
	}
	crash := r.crashAfter
	r.mu.Unlock()
	if crash != nil {
		crash()
	}
	return nil
}

func never(time.Duration) <-chan time.Time { return make(chan time.Time) }

// waitFor fails the test if ch is not closed soon; it guards against a hang
// and never decides the outcome by elapsed time.
func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("gave up waiting for %s", what)
	}
}

// TestOutboxCrash kills the relay between a publish and the cursor update,
// restarts HSM on the same database, and checks every SCN reaches the bus,
// exactly once after dedupe by (Seq, xname), in order per component.
func TestOutboxCrash(t *testing.T) { pg.EachDB(t, testOutboxCrash) }

func testOutboxCrash(t *testing.T, db testpeer.DB) {
	s1, path := hsmtest.NewStoreOn(t, db, core.Config{})
	ctx := t.Context()
	comps := hsmtest.Nodes(20, 1)
	if err := component.NewStore(s1).UpsertComponents(ctx, comps, false, nil); err != nil {
		t.Fatal(err)
	}
	all := hsmtest.IDsOf(comps)
	write := func(s *core.Store, st string) {
		if _, err := component.NewStore(s).UpdateState(ctx, all, component.StateUpdate{State: st}); err != nil {
			t.Fatal(err)
		}
	}
	write(s1, "On")
	write(s1, "Ready")

	rec := newRecorder(1 << 30)
	rctx, crash := context.WithCancel(ctx)
	// kill -9 between publish and cursor update: the database goes away
	// before the relay can record its progress.
	rec.crashAfter = func() { s1.Close(); crash() }
	r1 := scn.NewRelay(scn.NewStore(s1), scn.RelayConfig{Publisher: rec, After: never})
	if err := r1.Run(rctx); err != nil {
		t.Fatal(err)
	}
	if len(rec.msgs) == 0 {
		t.Fatal("relay published nothing before the crash")
	}
	s1.Close()

	s2, err := core.Open(ctx, path, migrations.FS, core.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	write(s2, "Standby")
	write(s2, "Ready")
	rows, err := s2.OutboxAfter(ctx, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, row := range rows {
		for _, id := range row.SCN.Components {
			want[fmt.Sprintf("%d/%s", row.Seq, id)] = true
		}
	}
	if len(want) != 4*len(all) {
		t.Fatalf("outbox holds %d component SCNs, want %d", len(want), 4*len(all))
	}
	rec.mu.Lock()
	rec.crashAfter, rec.want, rec.done = nil, len(want), make(chan struct{})
	done := rec.done
	rec.mu.Unlock()
	rctx, stop := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		errc <- scn.NewRelay(scn.NewStore(s2), scn.RelayConfig{Publisher: rec, After: never}).Run(rctx)
	}()
	waitFor(t, done, "every SCN on the bus")
	stop()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, rec.seen); diff != "" {
		t.Errorf("delivered set (-want +got):\n%s", diff)
	}
	if len(rec.msgs) <= len(want) {
		t.Errorf("expected the crashed batch to be published again; got %d messages for %d SCNs", len(rec.msgs), len(want))
	}
	last := map[string]int64{}
	for _, m := range rec.msgs {
		var scn hsm.SCN
		json.Unmarshal(m.Value, &scn)
		if len(scn.Components) != 1 || scn.Components[0] != string(m.Key) {
			t.Fatalf("message key %s carries components %v", m.Key, scn.Components)
		}
		if scn.Seq < last[string(m.Key)] && !rec.seen[fmt.Sprintf("%d/%s", scn.Seq, m.Key)] {
			t.Errorf("out of order for %s", m.Key)
		}
		last[string(m.Key)] = scn.Seq
	}
}

// TestRelaySubscriberDownThenUp: a subscriber that fails gets its SCNs, in
// order, once it answers again, after exponentially growing waits; a
// subscription created while the relay runs takes effect at once.
func TestRelaySubscriberDownThenUp(t *testing.T) { pg.EachDB(t, testRelaySubscriberDownThenUp) }

func testRelaySubscriberDownThenUp(t *testing.T, db testpeer.DB) {
	s, _ := hsmtest.NewStoreOn(t, db, core.Config{})
	ctx := t.Context()
	comps := hsmtest.Nodes(3, 1)
	if err := component.NewStore(s).UpsertComponents(ctx, comps, false, nil); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []hsm.SCN
	fails := 3
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if fails > 0 {
			fails--
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		var scn hsm.SCN
		json.NewDecoder(r.Body).Decode(&scn)
		scn.Timestamp = time.Time{}
		got = append(got, scn)
		if len(got) == 2 {
			close(done)
		}
	}))
	defer srv.Close()
	var waits []time.Duration
	var wmu sync.Mutex
	after := func(d time.Duration) <-chan time.Time {
		wmu.Lock()
		defer wmu.Unlock()
		if d >= time.Hour { // the compactor: never
			return nil
		}
		waits = append(waits, d)
		ch := make(chan time.Time, 1)
		ch <- time.Time{}
		return ch
	}
	rctx, stop := context.WithCancel(ctx)
	errc := make(chan error, 1)
	relay := scn.NewRelay(scn.NewStore(s), scn.RelayConfig{After: after, CompactEvery: time.Hour, MinBackoff: time.Second, MaxBackoff: 4 * time.Second, Log: slog.New(slog.DiscardHandler)})
	go func() { errc <- relay.Run(rctx) }()

	// Before the subscription: not delivered.
	if _, err := component.NewStore(s).UpdateState(ctx, hsmtest.IDsOf(comps[:1]), component.StateUpdate{State: "On"}); err != nil {
		t.Fatal(err)
	}
	sub, err := scn.NewStore(s).CreateSubscription(ctx, hsm.Subscription{Subscriber: "test", Url: srv.URL, States: []string{"ready", "Off"}})
	if err != nil {
		t.Fatal(err)
	}
	if sub.ID == 0 || sub.States[0] != "Ready" {
		t.Fatalf("created %+v", sub)
	}
	for _, st := range []string{"Ready", "Standby", "Off"} {
		if _, err := component.NewStore(s).UpdateState(ctx, hsmtest.IDsOf(comps[:2]), component.StateUpdate{State: st, Force: true}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, done, "two SCNs at the subscriber")
	stop()
	<-errc
	want := []hsm.SCN{
		{Components: []string{"x1c0s0b0n0", "x1c0s0b0n1"}, State: "Ready", Flag: "OK", Seq: 2, Epoch: s.Epoch},
		{Components: []string{"x1c0s0b0n0", "x1c0s0b0n1"}, State: "Off", Flag: "OK", Seq: 4, Epoch: s.Epoch},
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("subscriber got (-want +got):\n%s", diff)
	}
	wmu.Lock()
	defer wmu.Unlock()
	if diff := cmp.Diff([]time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, waits); diff != "" {
		t.Errorf("backoff waits (-want +got):\n%s", diff)
	}
}

// TestRetentionAndCompaction: rows every consumer has are compacted; rows
// older than the retention limit are dropped even if a subscriber never got
// them, and that subscriber's loss is counted.
func TestRetentionAndCompaction(t *testing.T) {
	clock := hsmtest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s, err := core.Open(t.Context(), t.TempDir()+"/hsm.db", migrations.FS, core.Config{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	comps := hsmtest.Nodes(2, 1)
	if err := component.NewStore(s).UpsertComponents(ctx, comps, false, nil); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []int64
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var scn hsm.SCN
		json.NewDecoder(r.Body).Decode(&scn)
		mu.Lock()
		defer mu.Unlock()
		got = append(got, scn.Seq)
		close(done)
	}))
	defer srv.Close()
	sub, err := scn.NewStore(s).CreateSubscription(ctx, hsm.Subscription{Subscriber: "late", Url: srv.URL, States: []string{"On", "Off", "Ready"}})
	if err != nil {
		t.Fatal(err)
	}
	component.NewStore(s).UpdateState(ctx, hsmtest.IDsOf(comps), component.StateUpdate{State: "On"})
	component.NewStore(s).UpdateState(ctx, hsmtest.IDsOf(comps), component.StateUpdate{State: "Off"})
	clock.Add(25 * time.Hour)
	component.NewStore(s).UpdateState(ctx, hsmtest.IDsOf(comps), component.StateUpdate{State: "Ready"})
	relay := scn.NewRelay(scn.NewStore(s), scn.RelayConfig{Retention: 24 * time.Hour, After: never})
	relay.Compact(ctx)
	if n, _ := s.OutboxLen(ctx); n != 1 {
		t.Fatalf("outbox has %d rows after expiry, want 1", n)
	}
	rctx, stop := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- relay.Run(rctx) }()
	waitFor(t, done, "the surviving SCN")
	stop()
	<-errc
	mu.Lock()
	if diff := cmp.Diff([]int64{3}, got); diff != "" {
		t.Errorf("delivered seqs (-want +got):\n%s", diff)
	}
	mu.Unlock()
	if got := counterValue(relay.Skipped(sub.Subscriber)); got != 2 {
		t.Errorf("missed counter = %v, want 2", got)
	}
	if got := counterValue(relay.Expired()); got != 2 {
		t.Errorf("expired counter = %v, want 2", got)
	}
	// Once every cursor (bus and subscriber) is past row 3, it is compacted.
	if err := s.SetCursor(ctx, "bus", 3); err != nil {
		t.Fatal(err)
	}
	if err := s.SetCursor(ctx, scn.SubCursor(sub.ID), 2); err != nil {
		t.Fatal(err)
	}
	relay.Compact(ctx)
	if n, _ := s.OutboxLen(ctx); n != 1 {
		t.Errorf("outbox has %d rows while the subscriber lags, want 1", n)
	}
	if err := s.SetCursor(ctx, scn.SubCursor(sub.ID), 3); err != nil {
		t.Fatal(err)
	}
	relay.Compact(ctx)
	if n, _ := s.OutboxLen(ctx); n != 0 {
		t.Errorf("outbox has %d rows after every consumer passed them, want 0", n)
	}
}

func counterValue(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		return -1
	}
	return m.GetCounter().GetValue()
}

// failNth is a publisher whose nth call fails; it counts messages accepted.
type failNth struct {
	n, calls, accepted int
	sizes              []int
}

func (f *failNth) Publish(_ context.Context, _ string, msgs ...bus.Message) error {
	f.calls++
	f.sizes = append(f.sizes, len(msgs))
	if f.calls == f.n {
		return fmt.Errorf("broker down")
	}
	f.accepted += len(msgs)
	return nil
}

// TestRelayPublishesBigRowsInBoundedCalls: a bulk-update row naming more
// components than one Publish may carry is sent in several calls, and the
// Cursor only passes rows whose messages were all accepted.
func TestRelayPublishesBigRowsInBoundedCalls(t *testing.T) {
	row := func(seq int64, n int) core.OutboxRow {
		ids := make([]string, n)
		for i := range ids {
			ids[i] = fmt.Sprintf("x%dc0s0b0n%d", seq, i)
		}
		return core.OutboxRow{Seq: seq, SCN: hsm.SCN{Components: ids, State: hsm.StateOff, Seq: seq}}
	}
	rows := []core.OutboxRow{row(1, 10), row(2, scn.BusMaxMessages+10), row(3, 5)}
	pub := &failNth{n: 2}
	r := scn.NewRelay(nil, scn.RelayConfig{Publisher: pub})
	done, err := r.Publish(t.Context(), rows)
	if err == nil || done != 1 {
		t.Fatalf("publish with the second call failing: done %d, err %v; want row 1 done and the error", done, err)
	}
	if pub.sizes[0] != scn.BusMaxMessages {
		t.Errorf("first call carried %d messages, want the bound %d", pub.sizes[0], scn.BusMaxMessages)
	}
	pub = &failNth{}
	r = scn.NewRelay(nil, scn.RelayConfig{Publisher: pub})
	if done, err := r.Publish(t.Context(), rows[1:]); err != nil || done != 3 {
		t.Fatalf("retry: done %d, err %v; want 3", done, err)
	}
	if want := scn.BusMaxMessages + 15; pub.accepted != want || len(pub.sizes) != 2 {
		t.Errorf("retry sent %d messages in %d calls, want %d in 2", pub.accepted, len(pub.sizes), want)
	}
}
