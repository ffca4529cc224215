package orchestrator

import (
	"net/http"

	"github.com/hmsuite/hms/internal/httpserver"
)

func (a *API) listTemplates(w http.ResponseWriter, r *http.Request) {
	ts, err := a.svc.Templates(r.Context(), tenant(r))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, ts)
}

func (a *API) getTemplate(w http.ResponseWriter, r *http.Request) {
	t, err := a.svc.Template(r.Context(), tenant(r), r.PathValue("id"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, t)
}

func (a *API) putTemplate(w http.ResponseWriter, r *http.Request) {
	b, err := body(w, r)
	if err == nil {
		var t Template
		if t, err = a.svc.PutTemplate(r.Context(), tenant(r), r.PathValue("id"), b); err == nil {
			httpserver.WriteJSON(w, http.StatusOK, t)
			return
		}
	}
	a.fail(w, r, err)
}

func (a *API) patchTemplate(w http.ResponseWriter, r *http.Request) {
	b, err := body(w, r)
	if err == nil {
		var t Template
		if t, err = a.svc.PatchTemplate(r.Context(), tenant(r), r.PathValue("id"), b); err == nil {
			httpserver.WriteJSON(w, http.StatusOK, t)
			return
		}
	}
	a.fail(w, r, err)
}

func (a *API) deleteTemplate(w http.ResponseWriter, r *http.Request) {
	if err := a.svc.DeleteTemplate(r.Context(), tenant(r), r.PathValue("id")); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (a *API) validateTemplate(w http.ResponseWriter, r *http.Request) {
	msg, err := a.svc.ValidateTemplate(r.Context(), tenant(r), r.PathValue("id"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, msg)
}

func (a *API) exampleTemplate(w http.ResponseWriter, _ *http.Request) {
	httpserver.WriteJSON(w, http.StatusOK, ExampleTemplate())
}
