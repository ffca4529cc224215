package statemgr_test

import (
	"log/slog"
	"testing"

	"github.com/hmsuite/hms/internal/auth/authtest"
	"github.com/hmsuite/hms/statemgr"
	"github.com/hmsuite/hms/statemgr/internal/core"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
	"github.com/hmsuite/hms/statemgr/inventory"
)

// TestAuthTable: the table names every route hsm serves (with discovery:
// all of them), and nothing else.
func TestAuthTable(t *testing.T) {
	c, _ := hsmtest.NewStore(t, core.Config{})
	creds, err := inventory.NewCreds(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	d := inventory.NewDiscovery(inventory.NewStore(c), creds, inventory.DiscoveryConfig{})
	api := statemgr.NewAPI(&statemgr.Store{Store: c}, slog.New(slog.DiscardHandler), d)
	authtest.CheckTable(t, statemgr.AuthTable(), api.Handler().Patterns())
}
