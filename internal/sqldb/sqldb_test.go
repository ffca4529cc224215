package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
)

func testMigrations() fstest.MapFS {
	return fstest.MapFS{
		"0001_init.sql":  {Data: []byte(`CREATE TABLE kv (k TEXT PRIMARY KEY, v INTEGER NOT NULL);`)},
		"0002_index.sql": {Data: []byte(`CREATE INDEX kv_v ON kv (v);`)},
		"README":         {Data: []byte("not a migration")},
	}
}

func TestOpenMigratesOnceAndReopens(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.db")
	db, err := Open(t.Context(), p, testMigrations())
	if err != nil {
		t.Fatal(err)
	}
	if err := db.WriteTx(t.Context(), func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO kv (k, v) VALUES ('a', 1)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db, err = Open(t.Context(), p, testMigrations())
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer db.Close()
	var n int
	if err := db.R.QueryRow(`SELECT COUNT(*) FROM schema_migrations`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("schema_migrations rows = %d, %v; want 2", n, err)
	}
	var mode string
	if err := db.W.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode = %q, %v; want wal", mode, err)
	}
	if _, err := db.R.Exec(`INSERT INTO kv (k, v) VALUES ('b', 2)`); err == nil {
		t.Fatal("reader pool accepted a write")
	}
}

func TestWriteTxRollsBackOnError(t *testing.T) {
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "t.db"), testMigrations())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	boom := errors.New("boom")
	err = db.WriteTx(t.Context(), func(tx *sql.Tx) error {
		if _, err := tx.Exec(`INSERT INTO kv (k, v) VALUES ('a', 1)`); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	var n int
	_ = db.R.QueryRow(`SELECT COUNT(*) FROM kv`).Scan(&n)
	if n != 0 {
		t.Fatalf("rows after rollback = %d, want 0", n)
	}
}

func TestUniqueViolationAndConcurrentWriters(t *testing.T) {
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "t.db"), testMigrations())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ins := func(ctx context.Context, k string) error {
		return db.WriteTx(ctx, func(tx *sql.Tx) error {
			_, err := tx.Exec(`INSERT INTO kv (k, v) VALUES (?, 1)`, k)
			return err
		})
	}
	if err := ins(t.Context(), "dup"); err != nil {
		t.Fatal(err)
	}
	if err := ins(t.Context(), "dup"); !IsUniqueViolation(err) {
		t.Fatalf("second insert err = %v, want unique violation", err)
	}
	// A second process-level handle on the same file (another program: Open
	// refuses a second daemon) contends for the write lock; WriteTx must
	// retry rather than surface SQLITE_BUSY.
	other, err := openUnlocked(t.Context(), db.Path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			h := db
			if i%2 == 1 {
				h = other
			}
			err := h.WriteTx(t.Context(), func(tx *sql.Tx) error {
				_, err := tx.Exec(`UPDATE kv SET v = v + 1 WHERE k = 'dup'`)
				return err
			})
			if err != nil {
				t.Errorf("writer %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	var v int
	_ = db.R.QueryRow(`SELECT v FROM kv WHERE k = 'dup'`).Scan(&v)
	if v != 51 {
		t.Fatalf("v = %d, want 51 (no lost updates)", v)
	}
}

func TestBadMigrationName(t *testing.T) {
	_, err := Open(t.Context(), filepath.Join(t.TempDir(), "t.db"), fstest.MapFS{"init.sql": {Data: []byte("SELECT 1")}})
	if err == nil {
		t.Fatal("want error for a migration without a number")
	}
}

// TestDuplicateMigrationVersion: two migrations of one number (two
// engineers adding the next one at once) fail Open, naming both, instead
// of one of them never running; a file and its PostgreSQL twin may share
// theirs (TestMigrationTwins).
func TestDuplicateMigrationVersion(t *testing.T) {
	fsys := fstest.MapFS{
		"0001_init.sql":  {Data: []byte("CREATE TABLE a (k TEXT PRIMARY KEY)")},
		"0002_left.sql":  {Data: []byte("CREATE TABLE b (k TEXT PRIMARY KEY)")},
		"0002_right.sql": {Data: []byte("CREATE TABLE c (k TEXT PRIMARY KEY)")},
	}
	_, err := Open(t.Context(), filepath.Join(t.TempDir(), "t.db"), fsys)
	if err == nil || !strings.Contains(err.Error(), "0002_left.sql and 0002_right.sql share version 2") {
		t.Fatalf("err = %v, want the two files of version 2 named", err)
	}
}

// TestStmtPreparedOnceOnWriter: a statement first met inside a transaction
// is prepared on the writer once it ends, and later transactions use it.
func TestStmtPreparedOnceOnWriter(t *testing.T) {
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "t.db"), testMigrations())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const q = `INSERT INTO kv (k, v) VALUES (?, ?)`
	insert := func(k string, v int) {
		t.Helper()
		if err := db.WriteTx(t.Context(), func(tx *sql.Tx) error {
			st, err := db.Stmt(t.Context(), tx, q)
			if err != nil {
				return err
			}
			_, err = st.Exec(k, v)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	insert("a", 1)
	first, ok := db.stmts.Load(q)
	if !ok {
		t.Fatal("statement not prepared on the writer after its first transaction")
	}
	insert("b", 2)
	insert("c", 3)
	if again, _ := db.stmts.Load(q); again != first {
		t.Error("statement prepared again")
	}
	var n int
	if err := db.R.QueryRow(`SELECT SUM(v) FROM kv`).Scan(&n); err != nil || n != 6 {
		t.Fatalf("sum = %d, %v; want 6", n, err)
	}
	if err := db.WriteTx(t.Context(), func(tx *sql.Tx) error {
		_, err := db.Stmt(t.Context(), tx, `NOT SQL`)
		return err
	}); err == nil {
		t.Error("a bad statement was accepted")
	}
}

// TestCheckpointBesideWriter: after a commit, a background checkpoint copies
// the WAL into the database file without the writer doing it.
func TestCheckpointBesideWriter(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.db")
	db, err := Open(t.Context(), p, testMigrations())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	size := func() int64 {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before := size()
	if err := db.WriteTx(t.Context(), func(tx *sql.Tx) error {
		for i := range 2000 {
			if _, err := tx.Exec(`INSERT INTO kv (k, v) VALUES (?, ?)`, fmt.Sprintf("key-%06d-%s", i, strings.Repeat("x", 200)), i); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	db.ckWG.Wait()
	if after := size(); after <= before+200*2000 {
		t.Errorf("database file %d -> %d bytes: the committed rows were not checkpointed into it", before, after)
	}
}

// TestStmtCacheIsBounded: generated SQL (a VALUES list per row count) does
// not grow the writer's statement cache past MaxCachedStmts, and still runs.
func TestStmtCacheIsBounded(t *testing.T) {
	db, err := Open(t.Context(), filepath.Join(t.TempDir(), "t.db"), testMigrations())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for n := 1; n <= MaxCachedStmts+20; n++ {
		q := `INSERT INTO kv (k, v) VALUES ` + strings.TrimSuffix(strings.Repeat("(?, ?),", n), ",")
		args := make([]any, 0, 2*n)
		for i := range n {
			args = append(args, fmt.Sprintf("%d-%d", n, i), i)
		}
		if err := db.WriteTx(t.Context(), func(tx *sql.Tx) error {
			st, err := db.Stmt(t.Context(), tx, q)
			if err != nil {
				return err
			}
			_, err = st.Exec(args...)
			return err
		}); err != nil {
			t.Fatalf("%d rows: %v", n, err)
		}
	}
	cached := 0
	db.stmts.Range(func(_, _ any) bool { cached++; return true })
	if cached != MaxCachedStmts {
		t.Errorf("%d statements cached, want the bound %d", cached, MaxCachedStmts)
	}
	var rows int
	if err := db.R.QueryRow(`SELECT COUNT(*) FROM kv`).Scan(&rows); err != nil || rows != (MaxCachedStmts+20)*(MaxCachedStmts+21)/2 {
		t.Errorf("rows = %d, %v", rows, err)
	}
}

// TestOpenLocksTheFile: while a database is open, an Open of it from another
// process fails at once with ErrLocked and a one-line message; once it is
// closed, the other process opens it.
func TestOpenLocksTheFile(t *testing.T) {
	if p := os.Getenv("SQLDB_LOCK_HELPER"); p != "" {
		db, err := Open(context.Background(), p, nil)
		if err != nil {
			fmt.Println(err)
			return
		}
		db.Close()
		fmt.Println("opened")
		return
	}
	other := func(p string) string {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestOpenLocksTheFile$")
		cmd.Env = append(os.Environ(), "SQLDB_LOCK_HELPER="+p)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("helper process: %v", err)
		}
		line, _, _ := strings.Cut(string(out), "\n") // the test binary prints PASS after it
		return line
	}
	p := filepath.Join(t.TempDir(), "x.db")
	db, err := Open(t.Context(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := other(p)
	if !strings.HasPrefix(got, ErrLocked.Error()+": "+p+" is used by another process") {
		t.Fatalf("Open from another process: %q, want ErrLocked naming %s", got, p)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if got := other(p); got != "opened" {
		t.Fatalf("Open from another process after Close: %q", got)
	}
}
