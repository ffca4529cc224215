// Package statemgr is the Hardware State Manager (HSM) daemon: the observed
// state of every component of the machine (State, Flag, Enabled,
// SoftwareStatus, Role, NID, ...), served over the HSM v2 REST API under
// /hsm/v2, plus groups, partitions, locks, Ethernet interfaces and durable
// state-change notifications (SCNs).
//
// SQLite is the durable truth. Components are also held in memory (see
// statemgr/internal/core), loaded when the Store opens and updated only after
// a write transaction commits, so reads and state-machine evaluation never
// touch the database. Every write that changes State, Flag, Enabled,
// SoftwareStatus, Role/SubRole or NID appends SCN rows to an outbox table in
// the same transaction; the Relay publishes that outbox to the bus and to
// HTTP subscribers, each with its own cursor, so no SCN is lost across
// crashes.
//
// Each resource family is a package of its own (docs/hsm.md has the map);
// this package mounts them.
package statemgr
