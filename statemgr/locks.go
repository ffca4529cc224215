package statemgr

import (
	"net/http"
	"strings"
	"time"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
)

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

// lockRoutes registers /locks/*.
func (a *API) lockRoutes(mux *httpserver.Mux) {
	mux.HandleFunc("POST "+Base+"/locks/reservations", a.createReservations(false))
	mux.HandleFunc("POST "+Base+"/locks/reservations/remove", a.lockOp(opRemove))
	mux.HandleFunc("POST "+Base+"/locks/reservations/release", a.keyOp(opRelease))
	mux.HandleFunc("POST "+Base+"/locks/service/reservations", a.createReservations(true))
	mux.HandleFunc("POST "+Base+"/locks/service/reservations/renew", a.keyOp(opRenew))
	mux.HandleFunc("POST "+Base+"/locks/service/reservations/release", a.keyOp(opRelease))
	mux.HandleFunc("POST "+Base+"/locks/service/reservations/check", a.checkReservations)
	mux.HandleFunc("GET "+Base+"/locks/status", a.lockStatusQuery)
	mux.HandleFunc("POST "+Base+"/locks/status", a.lockStatusIDs)
	mux.HandleFunc("POST "+Base+"/locks/lock", a.lockOp(opLock))
	mux.HandleFunc("POST "+Base+"/locks/unlock", a.lockOp(opUnlock))
	mux.HandleFunc("POST "+Base+"/locks/repair", a.lockOp(opRepair))
	mux.HandleFunc("POST "+Base+"/locks/disable", a.lockOp(opDisable))
}

// glModel validates a ProcessingModel; empty means rigid.
func glModel(v string) (string, error) {
	switch m := strings.ToLower(strings.TrimSpace(v)); m {
	case "", ModelRigid:
		return ModelRigid, nil
	case ModelFlexible:
		return m, nil
	default:
		return "", problem.Invalidf("ProcessingModel: %q is not rigid or flexible", v)
	}
}

// glDuration validates a ReservationDuration in minutes; 0 means 1.
func glDuration(n int) (time.Duration, error) {
	if n == 0 {
		n = 1
	}
	if n < 1 || n > 15 {
		return 0, problem.Invalidf("ReservationDuration: %d minutes is outside 1-15", n)
	}
	return time.Duration(n) * time.Minute, nil
}

// lockOp serves the lock operations and /locks/reservations/remove. Like
// every /locks route, they answer 200: the swagger says 202 for the
// reservation routes, but the shipped HSM sends 200, and CSM's reservation
// client treats anything else as a failure.
func (a *API) lockOp(op glOp) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req LockRequest
		err := httpserver.ReadJSON(w, r, 0, &req)
		var sel glLockSelection
		if err == nil {
			sel, err = glParseLockRequest(req, a.store.vocab, op != opRemove)
		}
		var res glOpResult
		if err == nil {
			res, err = a.store.lockOp(r.Context(), op, sel, a.log)
		}
		if err != nil {
			problem.Write(w, r, a.log, err)
			return
		}
		httpserver.WriteJSON(w, http.StatusOK, res.lockResult())
	}
}

func (a *API) createReservations(service bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req LockRequest
		err := httpserver.ReadJSON(w, r, 0, &req)
		var sel glLockSelection
		if err == nil {
			sel, err = glParseLockRequest(req, a.store.vocab, true)
		}
		op, dur := opReserveAdmin, time.Duration(0)
		if err == nil && service {
			op = opReserveService
			dur, err = glDuration(req.ReservationDuration)
		}
		var res glOpResult
		if err == nil {
			res, err = a.store.runLockOp(r.Context(), op, sel, dur)
		}
		if err != nil {
			problem.Write(w, r, a.log, err)
			return
		}
		httpserver.WriteJSON(w, http.StatusOK, ReservationResult{Success: glNonNilSlice(res.keys), Failure: glNonNilSlice(res.failed)})
	}
}

func (a *API) lockStatusIDs(w http.ResponseWriter, r *http.Request) {
	var req ComponentIDsRequest
	err := httpserver.ReadJSON(w, r, 0, &req)
	var ids []string
	if err == nil {
		ids, err = glXnames("ComponentIDs", req.ComponentIDs)
	}
	if err == nil && len(ids) == 0 {
		err = problem.Invalidf("ComponentIDs: must list at least one component")
	}
	var out LockStatusList
	if err == nil {
		// As the shipped HSM: none of the IDs known is 400, not an empty 200.
		if out = a.store.lockStatusByID(ids); len(out.Components) == 0 {
			err = problem.Invalidf("Component not found")
		}
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, out)
}

func (a *API) lockStatusQuery(w http.ResponseWriter, r *http.Request) {
	f, err := a.queryFilter(r, lockStatusParams, "locked", "reserved", "reservationdisabled")
	var want glStatusWant
	if err == nil {
		want, err = glParseStatusWant(r.URL.Query())
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	writeRawJSON(w, a.store.statusJSON(f, want))
}

func glNonNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
