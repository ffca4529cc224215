package statemgr_test

import (
	"log/slog"
	"testing"

	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/statemgr"
	"github.com/hmsuite/hms/statemgr/internal/core"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
)

// newServer serves the API the daemon serves (without the Redfish
// inventory, which needs a discovery) over a fresh store opened with cfg.
func newServer(t testing.TB, cfg core.Config) *hsmtest.Server {
	t.Helper()
	return newServerOn(t, testpeer.SQLite, cfg)
}

// newServerOn is newServer on a new database of db.
func newServerOn(t testing.TB, db testpeer.DB, cfg core.Config) *hsmtest.Server {
	t.Helper()
	c, _ := hsmtest.NewStoreOn(t, db, cfg)
	return hsmtest.ServeHandler(t, c, statemgr.NewAPI(&statemgr.Store{Store: c}, slog.New(slog.DiscardHandler), nil).Handler())
}
