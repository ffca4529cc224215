package inventory

import (
	"context"
	"database/sql"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/statemgr/internal/core"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
	"github.com/hmsuite/hms/statemgr/migrations"
	"github.com/hmsuite/hms/statemgr/redfish"
)

// newTestStore opens an inventory store over a fresh database and returns
// it with the database's path.
func newTestStore(t testing.TB) (*Store, string) {
	t.Helper()
	return newTestStoreOn(t, testpeer.SQLite)
}

// newTestStoreOn is newTestStore on a new database of db.
func newTestStoreOn(t testing.TB, db testpeer.DB) (*Store, string) {
	t.Helper()
	c, path := hsmtest.NewStoreOn(t, db, core.Config{})
	return NewStore(c), path
}

// openStore opens the store at path on clock now (nil: the real one),
// closed at cleanup.
func openStore(t testing.TB, path string, now func() time.Time) *Store {
	t.Helper()
	c, err := core.Open(t.Context(), path, migrations.FS, core.Config{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return NewStore(c)
}

// handler is the HSM API over s with d's Redfish inventory routes.
func handler(s *Store, d *Discovery) http.Handler {
	mux := hsmtest.Mux(coreOf(s))
	NewAPI(d, slog.New(slog.DiscardHandler)).Routes(mux)
	return mux
}

// coreOf is the shared core under s.
func coreOf(s *Store) *core.Store { return s.core.(*core.Store) }

// putInventory stores the inventory of res in a transaction of its own.
func (s *Store) putInventory(ctx context.Context, res *redfish.Result) error {
	return s.db.WriteTx(ctx, func(tx *sql.Tx) error { return s.putInventoryTx(ctx, stmtTx{tx, s.db}, res) })
}

// unqueueDiscovery takes endpoint id off the stored queue, as a walk's start does.
func (s *Store) unqueueDiscovery(ctx context.Context, id string) error {
	return s.db.WriteTx(ctx, func(tx *sql.Tx) error { return unqueueDiscoveryTx(ctx, stmtTx{tx, s.db}, id) })
}
