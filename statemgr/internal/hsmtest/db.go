package hsmtest

import (
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/statemgr/internal/core"
	"github.com/hmsuite/hms/statemgr/migrations"
)

// DB returns a new, empty database for one test: a SQLite file or a
// PostgreSQL URL (core.Open takes either).
type DB func(t testing.TB) string

// SQLite is the DB of a file in t.TempDir.
func SQLite(t testing.TB) string { return filepath.Join(t.TempDir(), "hsm.db") }

// EachDB runs fn once on SQLite and once on a database of pg, the test
// package's PostgreSQL server (skipped when PostgreSQL is not installed,
// failed under CI=true): the store's tests hold for both.
func EachDB(t *testing.T, pg *testpeer.Postgres, fn func(t *testing.T, db DB)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, SQLite) })
	t.Run("postgres", func(t *testing.T) { fn(t, pg.Database) })
}

// NewStoreOn opens the shared core over HSM's migrations on a new database
// of db, closed at cleanup, and returns it with the database's path or URL.
func NewStoreOn(t testing.TB, db DB, cfg core.Config) (*core.Store, string) {
	t.Helper()
	path := db(t)
	s, err := core.Open(t.Context(), path, migrations.FS, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

// NewServerOn serves the API over a new store on db.
func NewServerOn(t testing.TB, db DB) *Server {
	t.Helper()
	return NewServerWithOn(t, db, core.Config{})
}

// NewServerWithOn serves the API over a new store on db opened with cfg.
func NewServerWithOn(t testing.TB, db DB, cfg core.Config) *Server {
	t.Helper()
	s, _ := NewStoreOn(t, db, cfg)
	return Serve(t, s)
}

// OpenAPIOn opens a store on a new database of db and serves its API.
func OpenAPIOn(t testing.TB, db DB, now func() time.Time) (*core.Store, *httptest.Server) {
	t.Helper()
	s, _ := NewStoreOn(t, db, core.Config{Now: now})
	srv := httptest.NewServer(Mux(s))
	t.Cleanup(srv.Close)
	return s, srv
}

// Reopen closes s and opens its database again, as a restarted daemon
// does (closed at cleanup). PostgreSQL's advisory lock admits one store
// per database, so the first must be closed before the second opens.
func Reopen(t testing.TB, s *core.Store, cfg core.Config) *core.Store {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := core.Open(t.Context(), s.DB.Path, migrations.FS, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s2.Close() })
	return s2
}
