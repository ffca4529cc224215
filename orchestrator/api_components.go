package orchestrator

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
)

// componentFilter reads GET /v2/components's query.
func componentFilter(q url.Values) (ComponentFilter, error) {
	f := ComponentFilter{Session: q.Get("session"), StagedSession: q.Get("staged_session"),
		Status: q.Get("status"), StartAfter: q.Get("start_after_id")}
	if ids := splitList(q.Get("ids")); len(ids) > 0 {
		f.IDs = map[string]bool{}
		for _, id := range ids {
			f.IDs[id] = true
		}
	}
	if q.Has("enabled") {
		b, err := strconv.ParseBool(q.Get("enabled"))
		if err != nil {
			return f, problem.Invalidf("enabled %q: true or false expected", q.Get("enabled"))
		}
		f.Enabled = &b
	}
	if q.Has("phase") {
		p := q.Get("phase")
		switch p {
		case PhaseNone, PhasePoweringOn, PhasePoweringOff, PhaseConfiguring:
		default:
			return f, problem.Invalidf("phase %q: configuring, powering_off, powering_on or empty expected", p)
		}
		f.Phase = &p
	}
	if v := q.Get("page_size"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 1048576 {
			return f, problem.Invalidf("page_size %q: an integer from 0 to 1048576 expected", v)
		}
		f.PageSize = n
	}
	return f, nil
}

func (a *API) listComponents(w http.ResponseWriter, r *http.Request) {
	f, err := componentFilter(r.URL.Query())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	list := a.svc.Components(f)
	if tn := tenant(r); tn != "" {
		own, err := a.svc.tenantNodes(r.Context(), tn)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		list = slices.DeleteFunc(list, func(c Component) bool { return !own[c.ID] })
	}
	httpserver.WriteJSON(w, http.StatusOK, list)
}

func (a *API) getComponent(w http.ResponseWriter, r *http.Request) {
	err := a.owned(r, r.PathValue("id"))
	var c Component
	if err == nil {
		c, err = a.svc.Component(r.PathValue("id"))
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, c)
}

func (a *API) putComponents(w http.ResponseWriter, r *http.Request) {
	var list []json.RawMessage
	b, err := body(w, r)
	if err == nil {
		err = httpserver.DecodeJSON(b, &list)
	}
	if err == nil {
		err = a.ownedBody(r, b)
	}
	if err == nil {
		var out []Component
		if out, err = a.svc.PutComponents(r.Context(), list); err == nil {
			httpserver.WriteJSON(w, http.StatusOK, out)
			return
		}
	}
	a.fail(w, r, err)
}

func (a *API) putComponent(w http.ResponseWriter, r *http.Request) {
	b, err := body(w, r)
	if err == nil {
		err = a.owned(r, r.PathValue("id"))
	}
	if err == nil {
		var m map[string]any
		if err = httpserver.DecodeJSON(b, &m); err == nil && m != nil {
			m["id"] = r.PathValue("id")
			b, _ = json.Marshal(m)
		}
	}
	if err == nil {
		var out []Component
		if out, err = a.svc.PutComponents(r.Context(), []json.RawMessage{b}); err == nil {
			httpserver.WriteJSON(w, http.StatusOK, out[0])
			return
		}
	}
	a.fail(w, r, err)
}

func (a *API) patchComponents(w http.ResponseWriter, r *http.Request) {
	skip, _ := strconv.ParseBool(r.URL.Query().Get("skip_bad_ids"))
	b, err := body(w, r)
	if err == nil {
		err = a.ownedBody(r, b)
	}
	if err == nil {
		var out []Component
		if out, err = a.svc.PatchComponents(r.Context(), b, skip); err == nil {
			httpserver.WriteJSON(w, http.StatusOK, out)
			return
		}
	}
	a.fail(w, r, err)
}

func (a *API) patchComponent(w http.ResponseWriter, r *http.Request) {
	b, err := body(w, r)
	if err == nil {
		err = a.owned(r, r.PathValue("id"))
	}
	if err == nil {
		var c Component
		if c, err = a.svc.PatchComponent(r.Context(), r.PathValue("id"), b); err == nil {
			httpserver.WriteJSON(w, http.StatusOK, c)
			return
		}
	}
	if isConflict(err) {
		conflict(w, err, "The update was not allowed due to a conflict")
		return
	}
	a.fail(w, r, err)
}

func (a *API) deleteComponent(w http.ResponseWriter, r *http.Request) {
	err := a.owned(r, r.PathValue("id"))
	if err == nil {
		err = a.svc.DeleteComponent(r.Context(), r.PathValue("id"))
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (a *API) applyStaged(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Xnames []string `json:"xnames"`
	}
	b, err := body(w, r)
	if err == nil {
		err = decodeStrict(b, &req)
	}
	var others []string
	if err == nil {
		req.Xnames, others, err = a.ownedOnly(r, req.Xnames)
	}
	if err == nil {
		var res ApplyStagedResult
		if res, err = a.svc.ApplyStaged(r.Context(), req.Xnames); err == nil {
			res.Failed = append(res.Failed, others...)
			httpserver.WriteJSON(w, http.StatusOK, res)
			return
		}
	}
	a.fail(w, r, err)
}
