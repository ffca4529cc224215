package heartbeat

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hmsuite/hms/internal/testpeer"
)

// pg is the package's PostgreSQL server, started by the first test that
// asks for a database on it (eachDB).
var pg = testpeer.NewPostgres()

func TestMain(m *testing.M) {
	code := m.Run()
	pg.Stop()
	os.Exit(code)
}

// newDB returns a new, empty database for one test: a SQLite file or a
// PostgreSQL URL.
type newDB func(t testing.TB) string

// sqliteDB is the newDB of a file in t.TempDir.
func sqliteDB(t testing.TB) string { return filepath.Join(t.TempDir(), "hb.db") }

// eachDB runs fn once on SQLite and once on PostgreSQL (skipped when
// PostgreSQL is not installed, failed under CI=true). Tests inside a
// synctest bubble stay on SQLite: PostgreSQL is reached over a socket.
func eachDB(t *testing.T, fn func(t *testing.T, db newDB)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, sqliteDB) })
	t.Run("postgres", func(t *testing.T) { fn(t, pg.Database) })
}
