package statemgr

import "time"

// SCN is a state-change notification as HMS sends it (the SCNPayload of the
// shipped HSM: one value for many components, omitempty fields), plus the two
// fields this suite adds so consumers can order and dedupe: Timestamp and Seq.
//
// On the bus each SCN is published once per component (Components has one
// entry, message key = that xname), so per-component order holds across
// partitions; (Seq, Components[0]) identifies a message for deduplication.
type SCN struct {
	Components     []string `json:"Components"`
	Enabled        *bool    `json:"Enabled,omitempty"`
	Flag           string   `json:"Flag,omitempty"`
	Role           string   `json:"Role,omitempty"`
	SubRole        string   `json:"SubRole,omitempty"`
	SoftwareStatus string   `json:"SoftwareStatus,omitempty"`
	State          string   `json:"State,omitempty"`
	// NID is set on NID changes (one component per SCN then).
	NID *int `json:"NID,omitempty"`
	// Timestamp is when HSM committed the change (RFC 3339, UTC, nanoseconds).
	Timestamp time.Time `json:"Timestamp"`
	// Seq is the outbox sequence number: strictly increasing per HSM database.
	Seq int64 `json:"Seq"`
	// Epoch identifies the HSM database that numbered Seq: the time it was
	// created, in unix nanoseconds. A reset database starts Seq again under
	// a larger Epoch, so consumers order by (Epoch, Seq).
	Epoch int64 `json:"Epoch,omitempty"`
}
