package hsm

import (
	"slices"
	"strings"
	"time"
)

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

// Subscription is an HTTP callback subscriber to SCNs (/Subscriptions/SCN).
// It receives an SCN when the SCN's State is in States, its Role in Roles,
// its SubRole in SubRoles, its SoftwareStatus in SoftwareStatus, or when it
// reports an Enabled change and Enabled is true. ID is an integer on the
// wire, as the shipped HSM sends it (its swagger says string).
type Subscription struct {
	ID             int64    `json:"ID,omitempty"`
	Subscriber     string   `json:"Subscriber"`
	Enabled        *bool    `json:"Enabled,omitempty"`
	Roles          []string `json:"Roles,omitempty"`
	SubRoles       []string `json:"SubRoles,omitempty"`
	SoftwareStatus []string `json:"SoftwareStatus,omitempty"`
	States         []string `json:"States,omitempty"`
	Url            string   `json:"Url"`
}

// SubscriptionList is the body of GET /Subscriptions/SCN; with no
// subscription the list is null, as HSM sends it.
type SubscriptionList struct {
	SubscriptionList []Subscription `json:"SubscriptionList"`
}

// SubscriptionPatch is the body of PATCH /Subscriptions/SCN/{id}. A list that
// is absent (or null) is left alone by every Op, "replace" included.
type SubscriptionPatch struct {
	Op             string    `json:"Op"`
	Enabled        *bool     `json:"Enabled"`
	Roles          *[]string `json:"Roles"`
	SubRoles       *[]string `json:"SubRoles"`
	SoftwareStatus *[]string `json:"SoftwareStatus"`
	States         *[]string `json:"States"`
}

// Matches reports whether the subscription wants scn.
func (s *Subscription) Matches(scn *SCN) bool {
	in := func(list []string, v string) bool {
		return v != "" && slices.ContainsFunc(list, func(x string) bool { return strings.EqualFold(x, v) })
	}
	return in(s.States, scn.State) || in(s.Roles, scn.Role) || in(s.SubRoles, scn.SubRole) ||
		in(s.SoftwareStatus, scn.SoftwareStatus) || (scn.Enabled != nil && s.Enabled != nil && *s.Enabled)
}
