package orchestrator

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/testpeer"
)

// TestCreateSessionOnce: of concurrent creations of one session name exactly
// one succeeds and the others are ErrConflict; the stored session is the
// winner's (a check before an upsert let a second creation replace the
// first, found by review).
func TestCreateSessionOnce(t *testing.T) { pg.EachDB(t, testCreateSessionOnce) }

func testCreateSessionOnce(t *testing.T, db testpeer.DB) {
	st := openStore(t, db(t))
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			errs[i] = st.CreateSession(t.Context(), Session{Name: "s1", TemplateName: string(rune('a' + i))}, int64(i))
		})
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("creations %d and %d both succeeded", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, problem.ErrConflict):
			t.Errorf("creation %d: %v, want ErrConflict", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no creation succeeded")
	}
	got, err := st.Session(t.Context(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	if want := string(rune('a' + winner)); got.TemplateName != want {
		t.Errorf("stored template %q, want the winner's %q", got.TemplateName, want)
	}
}

// TestUpdateSessionKeepsDeletedDeleted: an operator pass that read a session
// before it was deleted cannot write it back (it used to upsert).
func TestUpdateSessionKeepsDeletedDeleted(t *testing.T) {
	pg.EachDB(t, testUpdateSessionKeepsDeletedDeleted)
}

func testUpdateSessionKeepsDeletedDeleted(t *testing.T, db testpeer.DB) {
	st := openStore(t, db(t))
	sess := Session{Name: "s1", TemplateName: "t"}
	if err := st.CreateSession(t.Context(), sess, 1); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteSession(t.Context(), "s1"); err != nil {
		t.Fatal(err)
	}
	sess.Status.Status = SessionComplete
	if err := st.UpdateSession(t.Context(), &sess); !errors.Is(err, problem.ErrNotFound) {
		t.Errorf("update of a deleted session: %v, want ErrNotFound", err)
	}
	if _, err := st.Session(t.Context(), "s1"); !errors.Is(err, problem.ErrNotFound) {
		t.Errorf("deleted session is back: %v", err)
	}
}

// TestUpdateSessionStaleVersion: a write based on a read older than the
// stored session is ErrConflict and changes nothing; after a re-read it
// goes through.
func TestUpdateSessionStaleVersion(t *testing.T) { pg.EachDB(t, testUpdateSessionStaleVersion) }

func testUpdateSessionStaleVersion(t *testing.T, db testpeer.DB) {
	st := openStore(t, db(t))
	if err := st.CreateSession(t.Context(), Session{Name: "s1", TemplateName: "t"}, 1); err != nil {
		t.Fatal(err)
	}
	a, _ := st.Session(t.Context(), "s1")
	b, _ := st.Session(t.Context(), "s1")
	a.Components = "x1"
	if err := st.UpdateSession(t.Context(), &a); err != nil {
		t.Fatal(err)
	}
	b.Status.Status = SessionComplete
	if err := st.UpdateSession(t.Context(), &b); !errors.Is(err, problem.ErrConflict) {
		t.Fatalf("stale update: %v, want ErrConflict", err)
	}
	b, _ = st.Session(t.Context(), "s1")
	b.Status.Status = SessionComplete
	if err := st.UpdateSession(t.Context(), &b); err != nil {
		t.Fatal(err)
	}
	got, _ := st.Session(t.Context(), "s1")
	if got.Components != "x1" || got.Status.Status != SessionComplete {
		t.Errorf("stored %+v, want both writes", got)
	}
}

// TestSaveComponentsStaleVersion: a component written from a stale
// version is ErrConflict, and the whole batch is left unwritten.
func TestSaveComponentsStaleVersion(t *testing.T) { pg.EachDB(t, testSaveComponentsStaleVersion) }

func testSaveComponentsStaleVersion(t *testing.T, db testpeer.DB) {
	st := openStore(t, db(t))
	first := []Component{{ID: "a"}, {ID: "b"}}
	if err := st.SaveComponents(t.Context(), first, nil); err != nil {
		t.Fatal(err)
	}
	if first[0].version != 1 {
		t.Fatalf("version after insert %d, want 1", first[0].version)
	}
	stale := []Component{{ID: "a", Error: "x", version: 1}, {ID: "b", Error: "stale", version: 0}}
	if err := st.SaveComponents(t.Context(), stale, nil); !errors.Is(err, problem.ErrConflict) {
		t.Fatalf("stale save: %v, want ErrConflict", err)
	}
	got, err := st.Components(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Error != "" || got[1].Error != "" || got[0].version != 1 {
		t.Errorf("stored %+v after a refused batch", got)
	}
}

// pg is the package's PostgreSQL server, started by the first test that
// asks for a database on it (pg.EachDB).
var pg = testpeer.NewPostgres()

func TestMain(m *testing.M) { pg.Main(m) }

// openStore opens the store on the database at path, closed when the test
// ends (Close again before is harmless).
func openStore(t *testing.T, path string) *Store {
	t.Helper()
	st, err := OpenStore(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestStoreRestart: what the store saved (templates of two tenants, sessions
// in creation order with their versions, components, options, configuration
// runs) is what a store opened afresh reads.
func TestStoreRestart(t *testing.T) { pg.EachDB(t, testStoreRestart) }

func testStoreRestart(t *testing.T, db testpeer.DB) {
	ctx := t.Context()
	path := db(t)
	st := openStore(t, path)
	const ns = 1_700_000_000_000_000_000 // creation times in Unix ns: past 2^31 and 2^32
	for _, tp := range []Template{{Name: "t1"}, {Name: "t1", Tenant: "vcluster-a", Description: "a's"}, {Name: "t0"}} {
		if err := st.PutTemplate(ctx, tp); err != nil {
			t.Fatal(err)
		}
	}
	for i, name := range []string{"s-b", "s-a"} { // created in this order
		if err := st.CreateSession(ctx, Session{Name: name, TemplateName: "t1"}, ns+int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	sess, _ := st.Session(ctx, "s-a")
	sess.Status.Status = SessionComplete
	if err := st.UpdateSession(ctx, &sess); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveComponents(ctx, []Component{{ID: "x1", Enabled: true}, {ID: "x2"}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := st.PutOptions(ctx, map[string]any{"polling_frequency": 2.0}); err != nil {
		t.Fatal(err)
	}
	runs := []configRun{{node: "x1", config: "c1", status: "running", gen: 1 << 40, pid: 4242, token: "tok"}, {node: "x2", config: "c1", status: "pending", gen: 2}}
	if err := st.putConfigRuns(ctx, runs); err != nil {
		t.Fatal(err)
	}
	runs[1].status, runs[1].err = "failed", "exit 1"
	if err := st.endConfigRuns(ctx, runs[1:]); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st = openStore(t, path)
	var names []string
	tps, err := st.Templates(ctx, "")
	for _, tp := range tps {
		names = append(names, tp.Tenant+"/"+tp.Name+":"+tp.Description)
	}
	if err != nil || !cmp.Equal(names, []string{"/t0:", "/t1:", "vcluster-a/t1:a's"}) {
		t.Errorf("templates %v %v", names, err)
	}
	names = nil
	sessions, err := st.Sessions(ctx)
	for _, s := range sessions {
		names = append(names, fmt.Sprint(s.Name, " ", s.Status.Status, " v", s.version))
	}
	if err != nil || !cmp.Equal(names, []string{"s-b  v0", "s-a complete v1"}) {
		t.Errorf("sessions %q %v, want s-b then s-a", names, err)
	}
	comps, err := st.Components(ctx)
	if err != nil || len(comps) != 2 || !comps[0].Enabled || comps[1].Enabled || comps[0].version != 1 {
		t.Errorf("components %+v %v", comps, err)
	}
	if o, err := st.Options(ctx); err != nil || o["polling_frequency"] != 2.0 {
		t.Errorf("options %v %v", o, err)
	}
	got, err := st.configRuns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(runs, got, cmp.AllowUnexported(configRun{})); diff != "" {
		t.Errorf("configuration runs (-want +got):\n%s", diff)
	}
}
