package orchestrator

import (
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/hmsuite/hms/internal/problem"
)

// TestCreateSessionOnce: of concurrent creations of one session name exactly
// one succeeds and the others are ErrConflict; the stored session is the
// winner's (a check before an upsert let a second creation replace the
// first, found by review).
func TestCreateSessionOnce(t *testing.T) {
	st := openStore(t)
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
	st := openStore(t)
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
func TestUpdateSessionStaleVersion(t *testing.T) {
	st := openStore(t)
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
func TestSaveComponentsStaleVersion(t *testing.T) {
	st := openStore(t)
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

func openStore(t *testing.T) *Store {
	t.Helper()
	st, err := OpenStore(t.Context(), filepath.Join(t.TempDir(), "bos.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
