package fanout

import (
	"context"
	"database/sql"
	"errors"
	"net/http"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/sqldb"
	"github.com/hmsuite/hms/internal/testpeer"
)

// storedSCNs counts the SCN bodies kept in the database.
func storedSCNs(t testing.TB, store *Store) int {
	t.Helper()
	var n int
	if err := store.db.R.QueryRowContext(context.WithoutCancel(t.Context()), `SELECT COUNT(*) FROM scns`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// openStore opens the store on the database at path, closed when the test
// ends.
func openStore(t *testing.T, path string) *Store {
	t.Helper()
	store, err := OpenStore(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

// reopen closes store and opens its database again, as a restarted hmnfd
// does.
func reopen(t *testing.T, store *Store, path string) *Store {
	t.Helper()
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	return openStore(t, path)
}

func loadIDs(t *testing.T, store *Store, url string) []int64 {
	t.Helper()
	rows, _, _, err := store.loadQueue(t.Context(), store.target(url), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, r := range rows {
		ids = append(ids, r.id)
	}
	return ids
}

func TestSCNBodyKeptUntilEveryTargetHasIt(t *testing.T) {
	pg.EachDB(t, testSCNBodyKeptUntilEveryTargetHasIt)
}

func testSCNBodyKeptUntilEveryTargetHasIt(t *testing.T, db testpeer.DB) {
	_, store := openService(t, db(t), Config{})
	ctx := t.Context()
	urls := []string{"http://a/", "http://b/", "http://c/"}
	tids, err := store.targetIDs(ctx, urls)
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := tids[0], tids[1], tids[2]
	// SCN 1 goes whole to a and b; c watches only some of its components and gets body 2.
	bodies := []scnRow{{id: 1, body: []byte(`{"Seq":1}`), enqueued: 5, targets: toRanges([]int64{a, b})},
		{id: 2, body: []byte(`{"Seq":1,"c":1}`), enqueued: 5, targets: toRanges([]int64{c})},
		{id: 3, body: []byte(`{"Seq":2}`), enqueued: 6, targets: toRanges([]int64{a, c})}}
	if err := store.enqueue(ctx, bodies, nil, nil); err != nil {
		t.Fatal(err)
	}
	again, err := store.targetIDs(ctx, []string{"http://c/", "http://a/"})
	if err != nil || !cmp.Equal(again, []int64{c, a}) {
		t.Fatalf("target ids again = %v, %v; want %v", again, err, []int64{c, a})
	}
	if got := loadIDs(t, store, "http://c/"); !cmp.Equal(got, []int64{2, 3}) {
		t.Errorf("c's backlog = %v, want [2 3]", got)
	}
	steps := []struct {
		name string
		do   func() error
		want int // bodies left
	}{
		{name: "a has 1 (b still owed it)", do: func() error { return store.ack(ctx, []qkey{{a, 1}}) }, want: 3},
		{name: "b has 1", do: func() error { return store.ack(ctx, []qkey{{b, 1}}) }, want: 2},
		{name: "c dropped", do: func() error { return store.deleteSubscriptions(ctx, nil, []string{"http://c/"}) }, want: 1},
		{name: "a has 3", do: func() error { return store.ack(ctx, []qkey{{a, 3}}) }, want: 0},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got := storedSCNs(t, store); got != st.want {
			t.Errorf("after %s: %d bodies stored, want %d", st.name, got, st.want)
		}
	}
}

func TestMigrationKeepsQueuedSCNs(t *testing.T) { pg.EachDB(t, testMigrationKeepsQueuedSCNs) }

func testMigrationKeepsQueuedSCNs(t *testing.T, db testpeer.DB) {
	ctx := t.Context()
	path := db(t)
	init, err := migrationFiles.ReadFile("migrations/0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	old, err := sqldb.Open(ctx, path, fstest.MapFS{"0001_init.sql": {Data: init}})
	if err != nil {
		t.Fatal(err)
	}
	err = old.WriteTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO queue (id, url, payload, enqueued_at) VALUES
			(7, 'http://a/', '{"Seq":7}', 70), (8, 'http://b/', '{"Seq":8}', 80), (9, 'http://a/', '{"Seq":9}', 90)`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	store, err := OpenStore(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	backlogs, maxID, err := store.backlogs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"http://a/": 2, "http://b/": 1}, backlogs); diff != "" || maxID != 9 {
		t.Errorf("backlogs after migration (-want +got):\n%s\nmax id %d, want 9", diff, maxID)
	}
	rows, _, _, err := store.loadQueue(ctx, store.target("http://a/"), 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []scnRow{{id: 7, body: []byte(`{"Seq":7}`), enqueued: 70}, {id: 9, body: []byte(`{"Seq":9}`), enqueued: 90}}
	if diff := cmp.Diff(want, rows, cmp.AllowUnexported(scnRow{}, rng{}), cmpopts.IgnoreFields(scnRow{}, "targets")); diff != "" {
		t.Errorf("a's backlog after migration (-want +got):\n%s", diff)
	}
}

// TestQueueStateSurvivesReopen: what was delivered before a restart is not
// owed again after it, what was not is, and an SCN goes once every target
// has it, whether the acknowledgements came before or after the restart.
func TestQueueStateSurvivesReopen(t *testing.T) { pg.EachDB(t, testQueueStateSurvivesReopen) }

func testQueueStateSurvivesReopen(t *testing.T, db testpeer.DB) {
	ctx := t.Context()
	path := db(t)
	store := openStore(t, path)
	tids, err := store.targetIDs(ctx, []string{"http://a/", "http://b/", "http://c/", "http://d/"})
	if err != nil {
		t.Fatal(err)
	}
	a, b, c, d := tids[0], tids[1], tids[2], tids[3]
	bodies := []scnRow{{id: 1, body: []byte(`{"Seq":1}`), enqueued: 5, targets: toRanges([]int64{a, b, c, d})},
		{id: 2, body: []byte(`{"Seq":2}`), enqueued: 6, targets: toRanges([]int64{a, d})}}
	if err := store.enqueue(ctx, bodies, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := store.ack(ctx, []qkey{{a, 1}, {c, 1}, {a, 2}, {a, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := store.deleteSubscriptions(ctx, nil, []string{"http://d/"}); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"http://b/": 1}
	check := func(when string, store *Store) {
		t.Helper()
		got, maxID, err := store.backlogs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" || maxID != 2 {
			t.Errorf("%s: backlogs (-want +got):\n%s\nmax id %d, want 2", when, diff, maxID)
		}
		for u, ids := range map[string][]int64{"http://a/": nil, "http://b/": {1}, "http://c/": nil, "http://d/": nil} {
			if got := loadIDs(t, store, u); !cmp.Equal(got, ids) {
				t.Errorf("%s: %s backlog = %v, want %v", when, u, got, ids)
			}
		}
		if n := storedSCNs(t, store); n != 1 {
			t.Errorf("%s: %d SCN bodies stored, want 1", when, n)
		}
	}
	check("before reopening", store)
	store = reopen(t, store, path)
	check("after reopening", store)
	if err := store.ack(ctx, []qkey{{b, 1}}); err != nil {
		t.Fatal(err)
	}
	if n := storedSCNs(t, store); n != 0 {
		t.Errorf("%d SCN bodies stored after the last delivery, want 0", n)
	}
}

// TestSubscriptionHasTargetAndSender: a subscription's URL gets its target
// and its sender when it is subscribed (also after a PATCH to a new URL, and
// at start for a database whose subscriptions have none), so an SCN to it
// stores no targets; the senders know their target ids.
func TestSubscriptionHasTargetAndSender(t *testing.T) {
	pg.EachDB(t, testSubscriptionHasTargetAndSender)
}

func testSubscriptionHasTargetAndSender(t *testing.T, db testpeer.DB) {
	ctx := t.Context()
	path := db(t)
	svc, store := openService(t, path, Config{Client: &http.Client{Transport: newReceiver()}})
	const node = "x1c0s0b0n0"
	mustSubscribe(t, svc, Key{Component: node, Agent: "a"}, Subscription{States: []string{"Off"}, Url: "http://a/scn"})
	mustSubscribe(t, svc, Key{Component: node, Agent: "b"}, Subscription{States: []string{"Off"}, Url: "http://b/scn"})
	if err := svc.Update(ctx, Key{Component: node, Agent: "b"}, Subscription{Url: "http://c/scn"}); err != nil {
		t.Fatal(err)
	}
	if err := svc.Update(ctx, Key{Component: node, Agent: "a"}, Subscription{Url: "http://c/scn"}); err != nil {
		t.Fatal(err)
	}
	// A subscription stored before targets came with subscriptions.
	err := store.db.WriteTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO subscriptions (component, agent, url, body, created_at)
			VALUES ('x1c0s0b0n1', 'old', 'http://old/scn', '{"States":["Off"],"Url":"http://old/scn"}', '')`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	targets := func(store *Store) int {
		t.Helper()
		var n int
		if err := store.db.R.QueryRowContext(ctx, `SELECT COUNT(*) FROM targets`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	check := func(when string, svc *Service, urls ...string) {
		t.Helper()
		for _, u := range urls {
			tid := svc.store.target(u)
			svc.mu.RLock()
			ref := svc.ix.urls[u]
			svc.mu.RUnlock()
			if tid == 0 || ref == nil || ref.snd == nil || ref.snd.tid != tid || svc.senders[u] != ref.snd {
				t.Errorf("%s: %s has target %d, index entry %+v; want a target and its sender", when, u, tid, ref)
			}
		}
	}
	check("subscribed", svc, "http://c/scn")
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	svc, store = openService(t, path, Config{Client: &http.Client{Transport: newReceiver()}})
	check("reopened", svc, "http://c/scn", "http://old/scn")
	before := targets(store)
	enqueueStates(t, svc, 1, 1, node, "Off")
	if n := targets(store); n != before {
		t.Errorf("an SCN stored %d targets, want none", n-before)
	}
}

// TestLiveSCNRecordsWhoHasIt: an SCN's targets are numbered across its
// ranges, and a bit per target records who has it; ids outside the ranges
// are not targets and are never owed.
func TestLiveSCNRecordsWhoHasIt(t *testing.T) {
	l := newLive(toRanges([]int64{21, 1, 2, 3, 10, 20}))
	if l.pending != 6 || l.size() != 6 {
		t.Fatalf("pending %d, size %d; want 6 and 6", l.pending, l.size())
	}
	for _, id := range []int64{2, 20, 5, 10, 2} {
		l.give(id)
	}
	for _, tc := range []struct {
		id     int64
		place  int
		target bool
		hasIt  bool
	}{
		{id: 1, place: 0, target: true},
		{id: 2, place: 1, target: true, hasIt: true},
		{id: 3, place: 2, target: true},
		{id: 5},
		{id: 10, place: 3, target: true, hasIt: true},
		{id: 20, place: 4, target: true, hasIt: true},
		{id: 21, place: 5, target: true},
		{id: 22},
	} {
		p, ok := l.place(tc.id)
		if ok != tc.target || (ok && (p != tc.place || l.hasAt(p) != tc.hasIt)) {
			t.Errorf("target %d: place %d, %v, has it %v; want %d, %v, %v", tc.id, p, ok, ok && l.hasAt(p), tc.place, tc.target, tc.hasIt)
		}
	}
}

// TestSeqMarksSurviveReopen: the intake marks stored with queued SCNs are
// what a store opened afresh loads, a later mark of a component replacing
// the earlier one, so a restarted hmnfd still drops redeliveries.
func TestSeqMarksSurviveReopen(t *testing.T) { pg.EachDB(t, testSeqMarksSurviveReopen) }

func testSeqMarksSurviveReopen(t *testing.T, db testpeer.DB) {
	ctx := t.Context()
	path := db(t)
	store := openStore(t, path)
	const ns = 1_700_000_000_000_000_000 // a Timestamp in Unix ns: past 2^31 and 2^32
	first := map[string]seqMark{"x1c0s0b0n0": {epoch: ns, seq: 1, ts: ns}, "x1c0s0b0n1": {seq: 7, ts: ns + 1}}
	body := []scnRow{{id: 1, body: []byte(`{"Seq":1}`), enqueued: ns}}
	if err := store.enqueue(ctx, body, first, nil); err != nil {
		t.Fatal(err)
	}
	if err := store.enqueue(ctx, nil, map[string]seqMark{"x1c0s0b0n0": {epoch: ns + 1, seq: 2, ts: ns + 2}}, nil); err != nil {
		t.Fatal(err)
	}
	got, err := reopen(t, store, path).seqMarks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]seqMark{"x1c0s0b0n0": {epoch: ns + 1, seq: 2, ts: ns + 2}, "x1c0s0b0n1": {seq: 7, ts: ns + 1}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(seqMark{})); diff != "" {
		t.Errorf("marks after reopening (-want +got):\n%s", diff)
	}
}

// TestDeadLetterStore: dead letters are listed oldest first with what was
// stored, those set aside before the cut-off are neither listed nor
// deletable one by one and go with the next dead letter, and deleting all
// empties the table.
func TestDeadLetterStore(t *testing.T) { pg.EachDB(t, testDeadLetterStore) }

func testDeadLetterStore(t *testing.T, db testpeer.DB) {
	ctx := t.Context()
	_, store := openService(t, db(t), Config{})
	t0 := time.Unix(1_700_000_000, 0).UTC()
	add := func(url string, at, oldest time.Time) {
		t.Helper()
		if err := store.addDeadLetter(ctx, url, "400 Bad Request", at, []byte(`{"Seq":1}`), oldest); err != nil {
			t.Fatal(err)
		}
	}
	add("http://a/", t0, t0.Add(-time.Hour))
	add("http://b/", t0.Add(time.Minute), t0.Add(-time.Hour))
	add("http://c/", t0.Add(2*time.Minute), t0.Add(-time.Hour))
	list := func(oldest time.Time) []string {
		t.Helper()
		dl, err := store.DeadLetters(ctx, oldest)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range dl {
			if d.Error != "400 Bad Request" || string(d.SCN) != `{"Seq":1}` || d.Time.Before(t0) {
				t.Errorf("dead letter %+v: not what was stored", d)
			}
			out = append(out, d.Url)
		}
		return out
	}
	if got := list(t0); !cmp.Equal(got, []string{"http://a/", "http://b/", "http://c/"}) {
		t.Fatalf("listed %v, want a, b, c", got)
	}
	dl, _ := store.DeadLetters(ctx, t0)
	if err := store.deleteDeadLetters(ctx, dl[1].ID, false, t0); err != nil {
		t.Fatal(err)
	}
	if err := store.deleteDeadLetters(ctx, dl[0].ID, false, t0.Add(time.Second)); !errors.Is(err, problem.ErrNotFound) {
		t.Errorf("deleting one past the cut-off: %v, want not found", err)
	}
	if err := store.deleteDeadLetters(ctx, dl[1].ID, false, t0); !errors.Is(err, problem.ErrNotFound) {
		t.Errorf("deleting one twice: %v, want not found", err)
	}
	if got := list(t0.Add(time.Second)); !cmp.Equal(got, []string{"http://c/"}) {
		t.Errorf("listed after the cut-off %v, want c", got)
	}
	add("http://d/", t0.Add(3*time.Minute), t0.Add(time.Second)) // a is deleted with it
	if got := list(t0); !cmp.Equal(got, []string{"http://c/", "http://d/"}) {
		t.Errorf("listed after the next dead letter %v, want c, d", got)
	}
	if err := store.deleteDeadLetters(ctx, 0, true, t0); err != nil {
		t.Fatal(err)
	}
	if got := list(time.Time{}); got != nil {
		t.Errorf("listed after deleting all %v, want none", got)
	}
}

// TestMovedBacklogSurvivesReopen: a subscription PATCHed to a URL that has
// a target but no backlog (a subscription used it and went) takes its
// backlog along (the two targets swap URLs under UNIQUE (url)), and a
// store opened afresh owes it to the new URL and nothing to the old.
func TestMovedBacklogSurvivesReopen(t *testing.T) { pg.EachDB(t, testMovedBacklogSurvivesReopen) }

func testMovedBacklogSurvivesReopen(t *testing.T, db testpeer.DB) {
	ctx := t.Context()
	path := db(t)
	svc, store := openService(t, path, Config{Client: &http.Client{Transport: newReceiver()}})
	const node = "x1c0s0b0n0"
	k, gone := Key{Component: "x1c0s0b0n9", Agent: "a"}, Key{Component: "x1c0s0b0n8", Agent: "b"}
	mustSubscribe(t, svc, k, Subscription{Components: []string{node}, States: []string{"Off"}, Url: "http://a/old"})
	mustSubscribe(t, svc, gone, Subscription{Components: []string{node}, States: []string{"Off"}, Url: "http://a/new"})
	if err := svc.Unsubscribe(ctx, gone, false, ""); err != nil {
		t.Fatal(err)
	}
	enqueueStates(t, svc, 1, 3, node, "Off")
	if err := svc.Update(ctx, k, Subscription{Url: "http://a/new"}); err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	_, store = openService(t, path, Config{Client: &http.Client{Transport: newReceiver()}})
	got, _, err := store.backlogs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"http://a/new": 3}, got); diff != "" {
		t.Errorf("backlogs after reopening (-want +got):\n%s", diff)
	}
	if ids := loadIDs(t, store, "http://a/new"); len(ids) != 3 {
		t.Errorf("new URL's backlog %v, want 3 SCNs", ids)
	}
}
