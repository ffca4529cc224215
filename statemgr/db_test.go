package statemgr_test

import (
	"os"
	"testing"

	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
)

// pg is the package's PostgreSQL server, started by the first test that
// asks for a database on it (eachDB).
var pg = testpeer.NewPostgres()

func TestMain(m *testing.M) {
	code := m.Run()
	pg.Stop()
	os.Exit(code)
}

// eachDB runs fn on SQLite and on PostgreSQL (hsmtest.EachDB).
func eachDB(t *testing.T, fn func(t *testing.T, db hsmtest.DB)) { hsmtest.EachDB(t, pg, fn) }
