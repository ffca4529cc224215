// Package heartbeat is the heartbeat tracker (hbtd): booted nodes POST a
// heartbeat every few seconds, the Tracker keeps the last-seen time of every node
// in memory, and when a node is late past Warntime or silent past Errtime it tells
// HSM (PATCH /hsm/v2/State/Components/BulkStateData) and the bus. When the node
// beats again it is put back to Ready.
//
// Design, against the incumbent's etcd read+write per beat:
//
//   - A beat is a sharded map lookup and two stores; nothing is written to disk
//     and nothing is sent unless the node changes state.
//   - Deadlines live in a per-shard timer wheel with a 100 ms tick. A node has at
//     most one wheel entry; beats never touch the wheel, the entry is checked
//     when it fires and moved to the node's real deadline if the node beat since.
//   - Only transitions are persisted (SQLite or PostgreSQL), so a restart knows who was alive.
//     After a restart, or a pause of the tracker longer than Errtime, every node
//     gets Errtime of grace before it can be declared dead.
//   - Notifications are coalesced per node (the latest change wins), grouped by
//     (State, Flag, Message) into bulk calls, and retried with backoff until HSM
//     accepts them, so HSM being down loses nothing.
package heartbeat

import (
	"time"
)

// API limits.
const (
	// MaxBeatBody caps the body of a single heartbeat.
	MaxBeatBody = 16 << 10
	// MaxBatchBody caps the body of POST /heartbeats.
	MaxBatchBody = 16 << 20
	// MaxQueryBody caps POST /hbstates and PATCH /params bodies.
	MaxQueryBody = 8 << 20
)

// Health is the answer to GET /health.
type Health struct {
	KvStore   string `json:"KvStore"`
	MsgBus    string `json:"MsgBus"`
	HsmStatus string `json:"HsmStatus"`
}

// State is where a tracked node is in its heartbeat life.
type State uint8

// Node states.
const (
	// Unknown nodes have never beaten.
	Unknown State = iota
	// Alive nodes beat within Warntime.
	Alive
	// Warned nodes have been silent past Warntime.
	Warned
	// Dead nodes have been silent past Errtime.
	Dead
)

// String names the state as it is stored.
func (s State) String() string {
	switch s {
	case Alive:
		return "alive"
	case Warned:
		return "warned"
	case Dead:
		return "dead"
	default:
		return "unknown"
	}
}

// parseState is the inverse of State.String.
func parseState(s string) State {
	switch s {
	case "alive":
		return Alive
	case "warned":
		return Warned
	case "dead":
		return Dead
	default:
		return Unknown
	}
}

// The four notifications, as HMS spells them.
const (
	MsgStarted   = "Heartbeat started"
	MsgRestarted = "Heartbeat restarted"
	MsgWarning   = "Heartbeat stopped -- might be dead"
	MsgDead      = "Heartbeat stopped -- declared dead"
)

// Change is one node's state transition, the unit that is persisted, sent to
// HSM and published on the bus.
type Change struct {
	XName string
	// From and To are the tracker states around the transition.
	From, To State
	// LastHB is the time stamp the node put in its last heartbeat.
	LastHB time.Time
	// At is when the tracker saw the transition.
	At time.Time
}

// HSMState, HSMFlag and Info are what HSM is told for the change.
func (c Change) HSMState() string {
	if c.To == Dead {
		return "Standby"
	}
	return "Ready"
}

// HSMFlag is the HSM flag the change sets.
func (c Change) HSMFlag() string {
	switch c.To {
	case Warned:
		return "Warning"
	case Dead:
		return "Alert"
	default:
		return "OK"
	}
}

// Info is the human-readable message of the change.
func (c Change) Info() string {
	switch {
	case c.To == Warned:
		return MsgWarning
	case c.To == Dead:
		return MsgDead
	case c.From == Unknown:
		return MsgStarted
	default:
		return MsgRestarted
	}
}

// BusMessage is a heartbeat change notification on bus.TopicHeartbeat.
type BusMessage struct {
	MessageID       string `json:"MessageID"`
	ID              string `json:"ID"`
	NewState        string `json:"NewState"`
	NewFlag         string `json:"NewFlag"`
	LastHBTimeStamp string `json:"LastHBTimeStamp"`
	Info            string `json:"Info"`
}

// BusMessageID is the MessageID of every heartbeat change notification.
const BusMessageID = "Heartbeat Change Notification"

// busMessage converts a change to its bus form.
func (c Change) busMessage() BusMessage {
	return BusMessage{
		MessageID:       BusMessageID,
		ID:              c.XName,
		NewState:        c.HSMState(),
		NewFlag:         c.HSMFlag(),
		LastHBTimeStamp: c.LastHB.UTC().Format(time.RFC3339Nano),
		Info:            c.Info(),
	}
}
