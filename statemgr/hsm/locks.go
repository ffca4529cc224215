package hsm

import "time"

// The locks v2 processing models: rigid applies all or nothing, flexible applies
// what it can and reports the rest.
const (
	ModelRigid    = "rigid"
	ModelFlexible = "flexible"
)

// The reasons a component appears in a Failure list.
const (
	ReasonNotFound    = "NotFound"
	ReasonLocked      = "Locked"
	ReasonUnlocked    = "Unlocked"
	ReasonDisabled    = "Disabled"
	ReasonReserved    = "Reserved"
	ReasonServerError = "ServerError"
)

// LockRequest selects components for the lock, unlock, repair, disable and
// reservation create/remove calls (AdminLock, AdminReservationCreate,
// AdminReservationRemove, ServiceReservationCreate). ComponentIDs and the filters
// are ANDed; values inside one filter are ORed.
type LockRequest struct {
	ComponentIDs    []string `json:"ComponentIDs"`
	Partition       []string `json:"Partition,omitempty"`
	Group           []string `json:"Group,omitempty"`
	Type            []string `json:"Type,omitempty"`
	State           []string `json:"State,omitempty"`
	Flag            []string `json:"Flag,omitempty"`
	Enabled         []string `json:"Enabled,omitempty"`
	Softwarestatus  []string `json:"Softwarestatus,omitempty"`
	Role            []string `json:"Role,omitempty"`
	Subrole         []string `json:"Subrole,omitempty"`
	Subtype         []string `json:"Subtype,omitempty"`
	Arch            []string `json:"Arch,omitempty"`
	Class           []string `json:"Class,omitempty"`
	NID             []string `json:"NID,omitempty"`
	ProcessingModel string   `json:"ProcessingModel,omitempty"`
	// ReservationDuration is in minutes, 1 to 15 (default 1); service reservations only.
	ReservationDuration int `json:"ReservationDuration,omitempty"`
}

// KeyedID is a component ID with a reservation or deputy key.
type KeyedID struct {
	ID  string `json:"ID"`
	Key string `json:"Key"`
}

// ReservationKeysRequest is the body of the release and renew calls.
type ReservationKeysRequest struct {
	ReservationKeys     []KeyedID `json:"ReservationKeys"`
	ProcessingModel     string    `json:"ProcessingModel,omitempty"`
	ReservationDuration int       `json:"ReservationDuration,omitempty"`
}

// DeputyKeysRequest is the body of the reservation check call.
type DeputyKeysRequest struct {
	DeputyKeys []KeyedID `json:"DeputyKeys"`
}

// ComponentIDsRequest is the body of POST /locks/status.
type ComponentIDsRequest struct {
	ComponentIDs []string `json:"ComponentIDs"`
}

// ReservationKeys is a created reservation. ExpirationTime is absent for
// reservations that do not expire.
type ReservationKeys struct {
	ID             string     `json:"ID"`
	DeputyKey      string     `json:"DeputyKey"`
	ReservationKey string     `json:"ReservationKey"`
	ExpirationTime *time.Time `json:"ExpirationTime,omitempty"`
}

// DeputyCheck is a valid reservation as the check call reports it.
type DeputyCheck struct {
	ID             string     `json:"ID"`
	DeputyKey      string     `json:"DeputyKey"`
	ExpirationTime *time.Time `json:"ExpirationTime,omitempty"`
}

// FailedID is a component an operation did not apply to, and why.
type FailedID struct {
	ID     string `json:"ID"`
	Reason string `json:"Reason"`
}

// ReservationResult answers reservation create calls.
type ReservationResult struct {
	Success []ReservationKeys `json:"Success"`
	Failure []FailedID        `json:"Failure"`
}

// CheckResult answers the reservation check call.
type CheckResult struct {
	Success []DeputyCheck `json:"Success"`
	Failure []FailedID    `json:"Failure"`
}

// Counts counts the components an operation was asked about.
type Counts struct {
	Total   int `json:"Total"`
	Success int `json:"Success"`
	Failure int `json:"Failure"`
}

// IDList is a list of component IDs.
type IDList struct {
	ComponentIDs []string `json:"ComponentIDs"`
}

// LockResult answers lock, unlock, repair, disable, remove, release and renew.
type LockResult struct {
	Counts  Counts     `json:"Counts"`
	Success IDList     `json:"Success"`
	Failure []FailedID `json:"Failure"`
}

// LockStatus is the lock and reservation state of one component.
type LockStatus struct {
	ID                  string     `json:"ID"`
	Locked              bool       `json:"Locked"`
	Reserved            bool       `json:"Reserved"`
	CreatedTime         *time.Time `json:"CreatedTime,omitempty"`
	ExpirationTime      *time.Time `json:"ExpirationTime,omitempty"`
	ReservationDisabled bool       `json:"ReservationDisabled"`
}

// LockStatusList answers /locks/status.
type LockStatusList struct {
	Components []LockStatus `json:"Components"`
	NotFound   []string     `json:"NotFound,omitempty"` // omitted when empty, as shipped
}
