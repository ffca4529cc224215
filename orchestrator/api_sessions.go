package orchestrator

import (
	"net/http"
	"net/url"
	"time"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
)

func (a *API) createSession(w http.ResponseWriter, r *http.Request) {
	var req SessionCreate
	b, err := body(w, r)
	if err == nil {
		err = decodeStrict(b, &req)
	}
	if err == nil {
		var sess Session
		if sess, err = a.svc.CreateSession(r.Context(), tenant(r), req); err == nil {
			httpserver.WriteJSON(w, http.StatusCreated, sess)
			return
		}
	}
	if isConflict(err) {
		conflict(w, err, "The resource to be created already exists")
		return
	}
	a.fail(w, r, err)
}

// sessionFilter reads min_age, max_age and status.
func sessionFilter(q url.Values) (SessionFilter, error) {
	var f SessionFilter
	for key, dst := range map[string]*time.Duration{"min_age": &f.MinAge, "max_age": &f.MaxAge} {
		v := q.Get(key)
		if v == "" {
			continue
		}
		if !stringPatterns["cleanup_completed_session_ttl"].MatchString(v) {
			return f, problem.Invalidf("%s %q: an age such as 3m, 5h, 10d or 2w expected", key, v)
		}
		*dst = parseAge(v)
	}
	f.Status = q.Get("status")
	switch f.Status {
	case "", SessionPending, SessionRunning, SessionComplete:
	default:
		return f, problem.Invalidf("status %q: pending, running or complete expected", f.Status)
	}
	return f, nil
}

func (a *API) listSessions(w http.ResponseWriter, r *http.Request) {
	f, err := sessionFilter(r.URL.Query())
	if err == nil {
		var list []Session
		if list, err = a.svc.Sessions(r.Context(), tenant(r), f); err == nil {
			httpserver.WriteJSON(w, http.StatusOK, list)
			return
		}
	}
	a.fail(w, r, err)
}

func (a *API) deleteSessions(w http.ResponseWriter, r *http.Request) {
	f, err := sessionFilter(r.URL.Query())
	if err == nil {
		err = a.svc.DeleteSessions(r.Context(), tenant(r), f)
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (a *API) getSession(w http.ResponseWriter, r *http.Request) {
	sess, err := a.svc.Session(r.Context(), tenant(r), r.PathValue("id"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, sess)
}

func (a *API) patchSession(w http.ResponseWriter, r *http.Request) {
	b, err := body(w, r)
	if err == nil {
		var sess Session
		if sess, err = a.svc.PatchSession(r.Context(), tenant(r), r.PathValue("id"), b); err == nil {
			httpserver.WriteJSON(w, http.StatusOK, sess)
			return
		}
	}
	a.fail(w, r, err)
}

func (a *API) deleteSession(w http.ResponseWriter, r *http.Request) {
	if err := a.svc.DeleteSession(r.Context(), tenant(r), r.PathValue("id")); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (a *API) sessionStatus(w http.ResponseWriter, r *http.Request) {
	st, err := a.svc.SessionStatus(r.Context(), tenant(r), r.PathValue("id"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, st)
}

// saveSessionStatus answers the session: BOS stores the extended status
// at completion; bos computes it from the components whenever asked.
func (a *API) saveSessionStatus(w http.ResponseWriter, r *http.Request) {
	a.getSession(w, r)
}
