// Package inventory serves HSM's Redfish inventory: RedfishEndpoints, the
// discovery that walks them (with their sealed credentials), the
// ComponentEndpoints, ServiceEndpoints and hardware inventory the walks
// store, and the Standby watchdog that reads a node's power from its BMC.
package inventory

import (
	"context"
	"time"

	"github.com/hmsuite/hms/internal/sqldb"
	"github.com/hmsuite/hms/statemgr/component"
	"github.com/hmsuite/hms/statemgr/ethernet"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

// Store is the Redfish inventory tables, over the shared core, with the
// components and Ethernet interfaces a walk fills.
type Store struct {
	core  coreReader
	db    *sqldb.DB
	now   func() time.Time
	vocab *core.Vocab
	// outbox wakes the watchdog when SCNs are appended.
	outbox *core.Signal
	eth    *ethernet.Store
	comp   *component.Store
}

// coreReader is what the inventory uses of the shared core: the SCN outbox
// (the watchdog follows it with its own cursor) and group membership.
type coreReader interface {
	OutboxAfter(ctx context.Context, after int64, limit int) ([]core.OutboxRow, error)
	Cursor(ctx context.Context, name string) (int64, error)
	SetCursor(ctx context.Context, name string, seq int64) error
	CreateCursor(ctx context.Context, name string, seq int64) error
	GroupMemberIDs(ctx context.Context, name, kind string) ([]string, error)
}

// NewStore returns the inventory kept in c.
func NewStore(c *core.Store) *Store {
	return &Store{core: c, db: c.DB, now: c.Now, vocab: c.Vocab(), outbox: c.Outbox,
		eth: ethernet.NewStore(c.DB, c.Now), comp: component.NewStore(c)}
}
