package power

import (
	"net/http"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/power/pcs"
)

func (a *API) createTransition(w http.ResponseWriter, r *http.Request) {
	var req pcs.TransitionRequest
	if err := httpserver.ReadJSON(w, r, 0, &req); err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	op, ok := pcs.ParseOperation(req.Operation)
	if !ok {
		problem.WriteStatus(w, r, http.StatusBadRequest, "invalid pcs.Operation type "+req.Operation)
		return
	}
	deadline := DefaultDeadline
	if req.Deadline != nil {
		deadline = *req.Deadline
	}
	tr, err := a.svc.Create(r.Context(), op, deadline, req.Location)
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	w.Header().Set("pcs.Location", "../transitions/"+tr.ID)
	httpserver.WriteJSON(w, http.StatusOK, struct {
		TransitionID string        `json:"transitionID"`
		Operation    pcs.Operation `json:"operation"`
	}{tr.ID, tr.Operation})
}

func (a *API) listTransitions(w http.ResponseWriter, _ *http.Request) {
	list := a.svc.List()
	out := make([]pcs.Transition, len(list))
	for i, t := range list {
		out[i] = pcs.Transition{TransitionID: t.ID, Operation: t.Operation, Created: t.Created, Expires: t.Expires,
			Status: t.Status, Counts: t.Counts}
	}
	httpserver.WriteJSON(w, http.StatusOK, map[string]any{"transitions": out})
}

func (a *API) getTransition(w http.ResponseWriter, r *http.Request) {
	id, ok := parseID(w, r)
	if !ok {
		return
	}
	tr, counts, err := a.svc.Get(id)
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	out := pcs.Transition{TransitionID: tr.ID, Operation: tr.Operation, Created: tr.Created, Expires: tr.Expires,
		Status: tr.Status, Counts: counts}
	for _, t := range tr.Tasks {
		out.Tasks = append(out.Tasks, pcs.Task{Xname: t.Xname, Status: t.Status, Description: t.Description, Error: t.Error})
	}
	httpserver.WriteJSON(w, http.StatusOK, out)
}

func (a *API) abortTransition(w http.ResponseWriter, r *http.Request) {
	id, ok := parseID(w, r)
	if !ok {
		return
	}
	if err := a.svc.Abort(r.Context(), id); err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusAccepted, map[string]string{"abortStatus": "Accepted - abort initiated"})
}
