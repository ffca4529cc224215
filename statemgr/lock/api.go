package lock

import (
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

// API serves /locks over a Store.
type API struct {
	store *Store
	log   *slog.Logger
}

// NewAPI returns the handlers of store.
func NewAPI(store *Store, log *slog.Logger) *API { return &API{store: store, log: log} }

// Routes registers /locks/*.
func (a *API) Routes(mux *httpserver.Mux) {
	mux.HandleFunc("POST "+hsm.Base+"/locks/reservations", a.createReservations(false))
	mux.HandleFunc("POST "+hsm.Base+"/locks/reservations/remove", a.lockOp(opRemove))
	mux.HandleFunc("POST "+hsm.Base+"/locks/reservations/release", a.keyOp(opRelease))
	mux.HandleFunc("POST "+hsm.Base+"/locks/service/reservations", a.createReservations(true))
	mux.HandleFunc("POST "+hsm.Base+"/locks/service/reservations/renew", a.keyOp(opRenew))
	mux.HandleFunc("POST "+hsm.Base+"/locks/service/reservations/release", a.keyOp(opRelease))
	mux.HandleFunc("POST "+hsm.Base+"/locks/service/reservations/check", a.checkReservations)
	mux.HandleFunc("GET "+hsm.Base+"/locks/status", a.lockStatusQuery)
	mux.HandleFunc("POST "+hsm.Base+"/locks/status", a.lockStatusIDs)
	mux.HandleFunc("POST "+hsm.Base+"/locks/lock", a.lockOp(opLock))
	mux.HandleFunc("POST "+hsm.Base+"/locks/unlock", a.lockOp(opUnlock))
	mux.HandleFunc("POST "+hsm.Base+"/locks/repair", a.lockOp(opRepair))
	mux.HandleFunc("POST "+hsm.Base+"/locks/disable", a.lockOp(opDisable))
}

// glModel validates a ProcessingModel; empty means rigid.
func glModel(v string) (string, error) {
	switch m := strings.ToLower(strings.TrimSpace(v)); m {
	case "", hsm.ModelRigid:
		return hsm.ModelRigid, nil
	case hsm.ModelFlexible:
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
		var req hsm.LockRequest
		err := httpserver.ReadJSON(w, r, 0, &req)
		var sel glLockSelection
		if err == nil {
			sel, err = glParseLockRequest(req, a.store.vocab, op != opRemove)
		}
		var res glOpResult
		if err == nil {
			res, err = a.store.lockOp(r.Context(), op, sel, a.log)
		}
		if err == nil && op != opRemove && res.foundNone() {
			// As shipped HSM: a lock, unlock, repair or disable whose
			// selection finds no component is 400, not an empty 200.
			err = problem.Invalidf("Component not found")
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
		var req hsm.LockRequest
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
		httpserver.WriteJSON(w, http.StatusOK, hsm.ReservationResult{Success: glNonNilSlice(res.keys), Failure: glNonNilSlice(res.failed)})
	}
}

func (a *API) lockStatusIDs(w http.ResponseWriter, r *http.Request) {
	var req hsm.ComponentIDsRequest
	err := httpserver.ReadJSON(w, r, 0, &req)
	var ids []string
	if err == nil {
		ids, err = core.Xnames("ComponentIDs", req.ComponentIDs)
	}
	if err == nil && len(ids) == 0 {
		err = problem.Invalidf("ComponentIDs: must list at least one component")
	}
	var out hsm.LockStatusList
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
	f, err := core.QueryFilter(r, a.log, a.store.vocab, core.LockStatusParams, "locked", "reserved", "reservationdisabled")
	var want core.StatusWant
	if err == nil {
		want, err = glParseStatusWant(r.URL.Query())
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	core.WriteRawJSON(w, a.store.core.StatusJSON(f, want))
}

func glNonNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
