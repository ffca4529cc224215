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
	"slices"
	"strings"
)

// Component is one HSM component as it travels on the wire. All fields but ID
// and Type are omitted when empty, as HMS does.
type Component struct {
	ID                  string `json:"ID"`
	Type                string `json:"Type"`
	State               string `json:"State,omitempty"`
	Flag                string `json:"Flag,omitempty"`
	Enabled             *bool  `json:"Enabled,omitempty"`
	SoftwareStatus      string `json:"SoftwareStatus,omitempty"`
	Role                string `json:"Role,omitempty"`
	SubRole             string `json:"SubRole,omitempty"`
	NID                 *int   `json:"NID,omitempty"`
	Subtype             string `json:"Subtype,omitempty"`
	NetType             string `json:"NetType,omitempty"`
	Arch                string `json:"Arch,omitempty"`
	Class               string `json:"Class,omitempty"`
	ReservationDisabled bool   `json:"ReservationDisabled,omitempty"`
	Locked              bool   `json:"Locked,omitempty"`
}

// ComponentList is the body of GET /State/Components and the query endpoints.
type ComponentList struct {
	Components []Component `json:"Components"`
}

// ExtendedInfo is the optional explanation a PATCH may carry. HSM accepts and
// logs it; it is not stored.
type ExtendedInfo struct {
	ID      string `json:"ID,omitempty"`
	Message string `json:"Message,omitempty"`
	Flag    string `json:"Flag,omitempty"`
}

// States, as HMS spells them on the wire.
const (
	StateUnknown   = "Unknown"
	StateEmpty     = "Empty"
	StatePopulated = "Populated"
	StateOff       = "Off"
	StateOn        = "On"
	StateStandby   = "Standby"
	StateHalt      = "Halt"
	StateReady     = "Ready"
)

// Flags, as HMS spells them on the wire.
const (
	FlagUnknown = "Unknown"
	FlagOK      = "OK"
	FlagWarning = "Warning"
	FlagAlert   = "Alert"
	FlagLocked  = "Locked"
)

// Enum is a closed set of canonical spellings matched without regard to case.
type Enum struct {
	// Field names the enum in error messages ("State", "Role", ...).
	Field  string
	Values []string
	alias  map[string]string
}

// with returns e with extra values appended (blank ones and duplicates of
// existing values, ignoring case, are dropped).
func (e Enum) with(extra []string) Enum {
	out := Enum{Field: e.Field, Values: slices.Clone(e.Values), alias: e.alias}
	for _, v := range extra {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		if _, dup := out.Normalize(v); !dup {
			out.Values = append(out.Values, v)
		}
	}
	return out
}

// Normalize returns the canonical spelling of s, or false if s is not a value.
func (e *Enum) Normalize(s string) (string, bool) {
	for _, v := range e.Values {
		if strings.EqualFold(v, s) {
			return v, true
		}
	}
	if v, ok := e.alias[strings.ToLower(s)]; ok {
		return v, true
	}
	return "", false
}

// The enumerations HSM validates, with the values /service/values reports.
// Roles and SubRoles are the built-in values; a site can add to them (see
// Vocab).
var (
	States   = Enum{Field: "State", Values: []string{StateUnknown, StateEmpty, StatePopulated, StateOff, StateOn, StateStandby, StateHalt, StateReady}}
	Flags    = Enum{Field: "Flag", Values: []string{FlagUnknown, FlagOK, FlagWarning, FlagAlert, FlagLocked}, alias: map[string]string{"warn": FlagWarning}}
	Roles    = Enum{Field: "Role", Values: []string{"Compute", "Service", "System", "Application", "Storage", "Management"}}
	SubRoles = Enum{Field: "SubRole", Values: []string{"Master", "Worker", "Storage"}}
	NetTypes = Enum{Field: "NetType", Values: []string{"Sling", "Infiniband", "Ethernet", "OEM", "None"}}
	Arches   = Enum{Field: "Arch", Values: []string{"X86", "ARM", "UNKNOWN", "Other"}}
	Classes  = Enum{Field: "Class", Values: []string{"River", "Mountain", "Hill"}}
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

// NodeMap is a default NID/Role/SubRole for a node xname, applied when the
// component is first created without them.
type NodeMap struct {
	ID      string `json:"ID"`
	NID     int    `json:"NID"`
	Role    string `json:"Role,omitempty"`
	SubRole string `json:"SubRole,omitempty"`
}

// Response is HMS's small success body ({"code":"0","message":"..."}).
type Response struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}
