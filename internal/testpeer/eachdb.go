package testpeer

import (
	"os"
	"path/filepath"
	"testing"
)

// DB returns a new, empty database for one test: a SQLite file or a
// PostgreSQL URL (sqldb.Open takes either).
type DB func(t testing.TB) string

// SQLite is the DB of a file in t.TempDir.
func SQLite(t testing.TB) string { return filepath.Join(t.TempDir(), "test.db") }

// EachDB runs fn once on SQLite and once on a database of p (skipped when
// PostgreSQL is not installed, failed under CI=true). Tests inside a
// testing/synctest bubble stay on SQLite: PostgreSQL is reached over a
// socket.
func (p *Postgres) EachDB(t *testing.T, fn func(t *testing.T, db DB)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, SQLite) })
	t.Run("postgres", func(t *testing.T) { fn(t, p.Database) })
}

// Main is a test package's TestMain when it has p: it runs the tests, then
// stops p's server.
func (p *Postgres) Main(m *testing.M) {
	code := m.Run()
	p.Stop()
	os.Exit(code)
}
