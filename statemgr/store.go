package statemgr

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"time"

	"github.com/hmsuite/hms/statemgr/component"
	"github.com/hmsuite/hms/statemgr/ethernet"
	"github.com/hmsuite/hms/statemgr/internal/core"
	"github.com/hmsuite/hms/statemgr/scn"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Store is HSM's persistent state on SQLite: the shared core (database,
// commit pipeline, in-memory indexes) plus the stores of the resource
// families. The families not yet in packages of their own keep their methods
// on this type.
type Store struct {
	*core.Store
	// eth is the Ethernet interfaces, which discovery fills.
	eth *ethernet.Store
	// comp is the components, which discovery creates and the watchdog reads.
	comp *component.Store
}

// StoreConfig holds what a Store depends on besides its database file.
type StoreConfig struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Layout, when set, gives the default NID, Role and SubRole of nodes
	// Created without them and absent from the NodeMaps (SLS).
	Layout core.LayoutSource
}

// OpenStore opens (creating if needed) the SQLite database at path, applies
// the migrations and loads the components into memory.
func OpenStore(ctx context.Context, path string, cfg StoreConfig) (*Store, error) {
	migs, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return nil, fmt.Errorf("hsm migrations: %w", err)
	}
	cs, err := core.Open(ctx, path, migs, core.Config{Now: cfg.Now, Layout: cfg.Layout})
	if err != nil {
		return nil, err
	}
	return &Store{Store: cs, eth: ethernet.NewStore(cs.DB, cs.Now), comp: component.NewStore(cs)}, nil
}

// NewRelay returns the SCN relay over store's outbox, for a caller that
// assembles HSM from a Store instead of running StartDaemon.
func NewRelay(store *Store, cfg scn.RelayConfig) *scn.Relay {
	return scn.NewRelay(scn.NewStore(store.Store), cfg)
}
