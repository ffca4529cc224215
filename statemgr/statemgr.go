// Package statemgr is the Hardware State Manager (HSM): the observed state of
// every component of the machine (State, Flag, Enabled, SoftwareStatus, Role,
// NID, ...), served over the HSM v2 REST API under /hsm/v2, plus groups,
// partitions, locks, Ethernet interfaces and durable state-change
// notifications (SCNs).
//
// SQLite is the durable truth. Components are also held in memory (see
// index.go), loaded when the Store opens and updated only after a write
// transaction commits, so reads and state-machine evaluation never touch the
// database. Every write that changes State, Flag, Enabled, SoftwareStatus,
// Role/SubRole or NID appends SCN rows to an outbox table in the same
// transaction; the Relay publishes that outbox to the bus and to HTTP
// subscribers, each with its own cursor, so no SCN is lost across crashes.
package statemgr

import (
	"context"
)

// NodeInfo is what the layout service knows about a node: its default NID,
// Role and SubRole (SLS ExtraProperties).
type NodeInfo struct {
	NID     *int   `json:"NID,omitempty"`
	Role    string `json:"Role,omitempty"`
	SubRole string `json:"SubRole,omitempty"`
}

// LayoutSource looks up a node in the intended system layout (SLS). found is
// false when SLS has no entry for xname.
type LayoutSource interface {
	NodeInfo(ctx context.Context, xname string) (info NodeInfo, found bool, err error)
}
