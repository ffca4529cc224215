package testpeer

import (
	"database/sql"
	"os"
	"testing"
)

var pg = NewPostgres()

func TestMain(m *testing.M) {
	code := m.Run()
	pg.Stop()
	os.Exit(code)
}

// TestPostgresDatabases checks that each test gets its own empty database,
// on a server that sorts text byte by byte.
func TestPostgresDatabases(t *testing.T) {
	a, b := pg.Database(t), pg.Database(t)
	if a == b {
		t.Fatalf("two databases, one URL %s", a)
	}
	for _, u := range []string{a, b} {
		db, err := sql.Open("pgx", u)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var collate string
		var tables int
		if err := db.QueryRowContext(t.Context(), `SELECT datcollate FROM pg_database WHERE datname = current_database()`).Scan(&collate); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM pg_tables WHERE schemaname = 'public'`).Scan(&tables); err != nil {
			t.Fatal(err)
		}
		if collate != "C" || tables != 0 {
			t.Errorf("%s: collation %q, %d tables; want C, 0", u, collate, tables)
		}
		if _, err := db.ExecContext(t.Context(), `CREATE TABLE mine (x TEXT)`); err != nil {
			t.Fatal(err)
		}
	}
}
