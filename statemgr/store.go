package statemgr

import (
	"context"
	"time"

	"github.com/hmsuite/hms/statemgr/internal/core"
	"github.com/hmsuite/hms/statemgr/migrations"
	"github.com/hmsuite/hms/statemgr/scn"
)

// Store is HSM's persistent state on SQLite or PostgreSQL: the shared core (database,
// commit pipeline, in-memory indexes) over HSM's migrations. Each resource
// family's package makes its own store over it (component.NewStore(s.Store)).
type Store struct {
	*core.Store
}

// StoreConfig holds what a Store depends on besides its database file.
type StoreConfig struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Layout, when set, gives the default NID, Role and SubRole of nodes
	// Created without them and absent from the NodeMaps (SLS).
	Layout core.LayoutSource
	// NoHistory turns the component history off: State and Flag changes
	// are not recorded.
	NoHistory bool
}

// OpenStore opens (creating if needed) the SQLite database at path, or the
// PostgreSQL database a postgres:// path names (sqldb.Open), applies
// the migrations and loads the components into memory.
func OpenStore(ctx context.Context, path string, cfg StoreConfig) (*Store, error) {
	cs, err := core.Open(ctx, path, migrations.FS, core.Config{Now: cfg.Now, Layout: cfg.Layout, NoHistory: cfg.NoHistory})
	if err != nil {
		return nil, err
	}
	return &Store{Store: cs}, nil
}

// NewRelay returns the SCN relay over store's outbox, for a caller that
// assembles HSM from a Store instead of running StartDaemon.
func NewRelay(store *Store, cfg scn.RelayConfig) *scn.Relay {
	return scn.NewRelay(scn.NewStore(store.Store), cfg)
}
