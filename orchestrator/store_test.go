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
	st, err := OpenStore(t.Context(), filepath.Join(t.TempDir(), "bos.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
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
	st, err := OpenStore(t.Context(), filepath.Join(t.TempDir(), "bos.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	sess := Session{Name: "s1", TemplateName: "t"}
	if err := st.CreateSession(t.Context(), sess, 1); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteSession(t.Context(), "s1"); err != nil {
		t.Fatal(err)
	}
	sess.Status.Status = SessionComplete
	if err := st.UpdateSession(t.Context(), sess); !errors.Is(err, problem.ErrNotFound) {
		t.Errorf("update of a deleted session: %v, want ErrNotFound", err)
	}
	if _, err := st.Session(t.Context(), "s1"); !errors.Is(err, problem.ErrNotFound) {
		t.Errorf("deleted session is back: %v", err)
	}
}
