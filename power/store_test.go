package power

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/power/pcs"
)

// pg is the package's PostgreSQL server, started by the first test that
// asks for a database on it (pg.EachDB).
var pg = testpeer.NewPostgres()

func TestMain(m *testing.M) { pg.Main(m) }

// openStore opens the store on the database at path, closed when the test
// ends (Close again before is harmless).
func openStore(t *testing.T, path string) *Store {
	t.Helper()
	s, err := OpenStore(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestStoreRestart: what a store saved (transitions with their tasks in
// order, the steps and reservation keys of a run, times in nanoseconds) is
// what a store opened afresh loads, and a deleted transition takes its
// tasks along.
func TestStoreRestart(t *testing.T) { pg.EachDB(t, testStoreRestart) }

func testStoreRestart(t *testing.T, db testpeer.DB) {
	ctx := t.Context()
	path := db(t)
	s := openStore(t, path)
	t0 := time.Unix(1_700_000_000, 123_456_789).UTC()
	trs := []*Transition{
		{ID: "b-first", Operation: pcs.Operation("force-off"), Created: t0, Expires: t0.Add(24 * time.Hour), Status: pcs.TransitionNew, Deadline: 10,
			Tasks: []*Task{{Xname: "x1c0s1b0n0", Status: pcs.TaskNew}, {Xname: "x1c0s0b0n0", DeputyKey: "dk", Status: pcs.TaskNew}}},
		{ID: "a-second", Operation: pcs.Operation("on"), Created: t0.Add(time.Second), Expires: t0.Add(25 * time.Hour), Status: pcs.TransitionNew,
			Tasks: []*Task{{Xname: "x1c0s2b0n0", Status: pcs.TaskNew}}},
		{ID: "c-gone", Operation: pcs.Operation("off"), Created: t0.Add(2 * time.Second), Expires: t0.Add(time.Hour), Status: pcs.TransitionNew,
			Tasks: []*Task{{Xname: "x1c0s3b0n0", Status: pcs.TaskNew}}},
	}
	for _, tr := range trs {
		if err := s.Create(ctx, tr); err != nil {
			t.Fatal(err)
		}
	}
	run := Task{Xname: "x1c0s0b0n0", DeputyKey: "dk", Status: pcs.TaskInProgress, Description: "Confirming", Step: 2, ResvKey: "rk"}
	if err := s.Save(ctx, "b-first", pcs.TransitionInProgress, []Task{run}); err != nil {
		t.Fatal(err)
	}
	trs[0].Status, trs[0].Tasks[1] = pcs.TransitionInProgress, &run
	if err := s.Delete(ctx, []string{"c-gone"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, path)
	got, err := s.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(trs[:2], got); diff != "" {
		t.Errorf("loaded (-want +got):\n%s", diff)
	}
	var tasks int
	if err := s.db.R.QueryRowContext(ctx, `SELECT COUNT(*) FROM tasks WHERE transition_id = ?`, "c-gone").Scan(&tasks); err != nil || tasks != 0 {
		t.Errorf("tasks of the deleted transition: %d %v, want none", tasks, err)
	}
}

// TestCapTasksSurviveRestart: stored power-cap tasks are loaded by a
// service started afresh, one a restart interrupted completed with an
// error on its unfinished components, and expired ones are deleted.
func TestCapTasksSurviveRestart(t *testing.T) { pg.EachDB(t, testCapTasksSurviveRestart) }

func testCapTasksSurviveRestart(t *testing.T, db testpeer.DB) {
	ctx := t.Context()
	path := db(t)
	t0 := time.Unix(1_700_000_000, 0).UTC()
	svc, err := New(ctx, openStore(t, path), nil, nil, Config{Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	done := &CapTask{ID: "done", Type: CapSnapshot, Created: t0, Expires: t0.Add(time.Hour), Status: CapCompleted,
		Components: []CapComponent{{Xname: "x1c0s0b0n0", Error: "refused"}}}
	busy := &CapTask{ID: "busy", Type: CapSnapshot, Created: t0, Expires: t0.Add(2 * time.Hour), Status: "in-progress",
		Components: []CapComponent{{Xname: "x1c0s0b0n0"}}}
	for _, c := range []*CapTask{done, busy} {
		if err := svc.saveCap(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	done.Components[0].Error = "refused again" // saved again: the upsert replaces the body
	if err := svc.saveCap(ctx, done); err != nil {
		t.Fatal(err)
	}
	if err := svc.store.Close(); err != nil {
		t.Fatal(err)
	}
	svc, err = New(ctx, openStore(t, path), nil, nil, Config{Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	errs := map[string]string{}
	for id, c := range svc.caps.tasks {
		errs[id] = c.Status + ": " + c.Components[0].Error
	}
	want := map[string]string{"done": CapCompleted + ": refused again", "busy": CapCompleted + ": Interrupted by a pcs restart"}
	if diff := cmp.Diff(want, errs); diff != "" {
		t.Errorf("loaded (-want +got):\n%s", diff)
	}
	if err := svc.expireCaps(ctx, t0.Add(90*time.Minute)); err != nil {
		t.Fatal(err)
	}
	var ids []string
	rows, err := svc.store.db.R.QueryContext(ctx, `SELECT id FROM powercap_tasks ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if !cmp.Equal(ids, []string{"busy"}) {
		t.Errorf("stored after expiry %v, want busy", ids)
	}
}
