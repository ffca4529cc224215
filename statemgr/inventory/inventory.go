// Package inventory serves HSM's Redfish inventory: RedfishEndpoints, the
// discovery that walks them (with their sealed credentials), the
// ComponentEndpoints, ServiceEndpoints and hardware inventory the walks
// store, and the Standby watchdog that reads a node's power from its BMC.
package inventory

import (
	"github.com/hmsuite/hms/statemgr/component"
	"github.com/hmsuite/hms/statemgr/ethernet"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

// Store is the Redfish inventory tables, over the shared core, with the
// components and Ethernet interfaces a walk fills.
type Store struct {
	*core.Store
	eth  *ethernet.Store
	comp *component.Store
}

// NewStore returns the inventory kept in c.
func NewStore(c *core.Store) *Store {
	return &Store{Store: c, eth: ethernet.NewStore(c.DB, c.Now), comp: component.NewStore(c)}
}
