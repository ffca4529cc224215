package sqldb

import (
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// holdGroup opens a database and starts a GroupTx on it that returns once
// its function runs: the calls made before release is closed queue behind
// it and are committed together. done reports that first call's outcome.
func holdGroup(t *testing.T, release <-chan struct{}) (db *DB, done <-chan error) {
	t.Helper()
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "t.db"), testMigrations())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	entered, out := make(chan struct{}), make(chan error, 1)
	go func() {
		out <- db.GroupTx(t.Context(), func(tx *sql.Tx) error {
			close(entered)
			<-release
			_, err := tx.Exec(`INSERT INTO kv (k, v) VALUES ('leader', 0)`)
			return err
		})
	}()
	<-entered
	return db, out
}

// waitQueued returns once n calls wait in db's GroupTx queue.
func waitQueued(db *DB, n int) {
	for db.txs.queued() < n {
		runtime.Gosched()
	}
}

// TestGroupTxCommitsTogether: calls that arrive while a transaction is being
// written are committed in one transaction, each in its own savepoint: a
// failing function is rolled back alone and its caller alone gets its
// error; the others' writes are all there.
func TestGroupTxCommitsTogether(t *testing.T) {
	release := make(chan struct{})
	db, leader := holdGroup(t, release)

	boom := errors.New("boom")
	const n = 6
	errs := make([]error, n)
	// seen[i] is how many rows a reader saw while function i ran: the
	// leader's only, if every function of the round shares one transaction.
	seen := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			errs[i] = db.GroupTx(t.Context(), func(tx *sql.Tx) error {
				if _, err := tx.Exec(`INSERT INTO kv (k, v) VALUES (?, ?)`, fmt.Sprint("k", i), i); err != nil {
					return err
				}
				if err := db.R.QueryRow(`SELECT COUNT(*) FROM kv`).Scan(&seen[i]); err != nil {
					return err
				}
				if i == 3 {
					return boom
				}
				return nil
			})
		})
	}
	waitQueued(db, n)
	close(release)
	if err := <-leader; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, err := range errs {
		if want := i == 3; errors.Is(err, boom) != want || (!want && err != nil) {
			t.Errorf("call %d: err %v", i, err)
		}
	}
	if diff := cmp.Diff([]int{1, 1, 1, 1, 1, 1}, seen); diff != "" {
		t.Errorf("rows a reader saw during each function (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"k0", "k1", "k2", "k4", "k5", "leader"}, keys(t, db)); diff != "" {
		t.Errorf("stored keys (-want +got):\n%s", diff)
	}
}

// TestGroupTxTransactionLost: a function whose failure takes the whole
// transaction with it (as SQLite does on an interrupted statement) fails
// alone; the other functions of its round are committed again without it.
func TestGroupTxTransactionLost(t *testing.T) {
	release := make(chan struct{})
	db, leader := holdGroup(t, release)
	lost := errors.New("interrupted")
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			errs[i] = db.GroupTx(t.Context(), func(tx *sql.Tx) error {
				if _, err := tx.Exec(`INSERT INTO kv (k, v) VALUES (?, ?)`, fmt.Sprint("k", i), i); err != nil {
					return err
				}
				if i == 1 {
					_, _ = tx.Exec(`ROLLBACK`) // what SQLite does itself on some errors
					return lost
				}
				return nil
			})
		})
	}
	waitQueued(db, 3)
	close(release)
	if err := <-leader; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if errs[0] != nil || errs[2] != nil || !errors.Is(errs[1], lost) {
		t.Errorf("errors %v, want only call 1's own", errs)
	}
	if diff := cmp.Diff([]string{"k0", "k2", "leader"}, keys(t, db)); diff != "" {
		t.Errorf("stored keys (-want +got):\n%s", diff)
	}
}

// keys returns the stored keys, sorted.
func keys(t *testing.T, db *DB) []string {
	t.Helper()
	rows, err := db.R.Query(`SELECT k FROM kv`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestWriteEachFinish: the functions of WriteEach share one commit; a
// failing one is rolled back alone; finish runs last in the same
// transaction, told which succeeded; a failing finish fails them all.
func TestWriteEachFinish(t *testing.T) {
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "t.db"), testMigrations())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	boom := errors.New("boom")
	fns := make([]func(*sql.Tx) error, 3)
	for i := range fns {
		fns[i] = func(tx *sql.Tx) error {
			if _, err := tx.Exec(`INSERT INTO kv (k, v) VALUES (?, ?)`, fmt.Sprint("k", i), i); err != nil {
				return err
			}
			if i == 1 {
				return boom
			}
			return nil
		}
	}
	var told []bool
	before := db.Commits()
	errs := db.WriteEach(t.Context(), fns, func(tx *sql.Tx, ok []bool) error {
		told = ok
		_, err := tx.Exec(`INSERT INTO kv (k, v) VALUES ('finish', 0)`)
		return err
	})
	if errs[0] != nil || !errors.Is(errs[1], boom) || errs[2] != nil {
		t.Errorf("errors %v, want only function 1's own", errs)
	}
	if diff := cmp.Diff([]bool{true, false, true}, told); diff != "" {
		t.Errorf("finish told (-want +got):\n%s", diff)
	}
	if n := db.Commits() - before; n != 1 {
		t.Errorf("%d commits, want 1", n)
	}
	if diff := cmp.Diff([]string{"finish", "k0", "k2"}, keys(t, db)); diff != "" {
		t.Errorf("stored keys (-want +got):\n%s", diff)
	}

	fns = fns[:1]
	fns[0] = func(tx *sql.Tx) error { _, err := tx.Exec(`INSERT INTO kv (k, v) VALUES ('k9', 9)`); return err }
	errs = db.WriteEach(t.Context(), fns, func(*sql.Tx, []bool) error { return boom })
	if !errors.Is(errs[0], boom) {
		t.Errorf("finish failing: %v, want its error", errs[0])
	}
	if diff := cmp.Diff([]string{"finish", "k0", "k2"}, keys(t, db)); diff != "" {
		t.Errorf("after a failing finish, stored keys (-want +got):\n%s", diff)
	}
}
