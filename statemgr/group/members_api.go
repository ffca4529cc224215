package group

import (
	"net/http"
	"net/url"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

func (a *API) groupMembers(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name, part, err := glPathName(r, kind)
		var ids []string
		if err == nil {
			ids, err = a.store.groupMembers(kind, name, part)
		}
		if err != nil {
			problem.Write(w, r, a.log, err)
			return
		}
		httpserver.WriteJSON(w, http.StatusOK, hsm.Members{IDs: ids})
	}
}

func (a *API) addGroupMember(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name, _, err := glPathName(r, kind)
		var m hsm.MemberID
		if err == nil {
			err = httpserver.ReadJSON(w, r, 0, &m)
		}
		var x xname.Xname
		if err == nil {
			if x, err = xname.Parse(m.ID); err != nil {
				err = problem.Invalidf("id: %v", err)
			}
		}
		if err == nil {
			err = a.store.addGroupMember(r.Context(), kind, name, x.String())
		}
		if err != nil {
			problem.Write(w, r, a.log, err)
			return
		}
		uri := glGroupPath(kind, name) + "/members/" + url.PathEscape(x.String())
		httpserver.WriteJSON(w, http.StatusCreated, []hsm.ResourceURI{{URI: uri}})
	}
}

func (a *API) removeGroupMember(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name, _, err := glPathName(r, kind)
		var x xname.Xname
		if err == nil {
			if x, err = xname.Parse(r.PathValue("xname")); err != nil {
				err = problem.Invalidf("xname_id: %v", err)
			}
		}
		if err == nil {
			err = a.store.removeGroupMember(r.Context(), kind, name, x.String())
		}
		if err != nil {
			problem.Write(w, r, a.log, err)
			return
		}
		core.WriteDeletedOne(w)
	}
}

func (a *API) listMemberships(w http.ResponseWriter, r *http.Request) {
	f, err := core.QueryFilter(r, a.log, a.store.vocab, core.ComponentParams)
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	core.WriteRawJSON(w, a.store.memberships(f))
}

func (a *API) getMembership(w http.ResponseWriter, r *http.Request) {
	x, err := xname.Parse(r.PathValue("xname"))
	if err != nil {
		problem.Write(w, r, a.log, problem.Invalidf("xname: %v", err))
		return
	}
	m, err := a.store.membership(x.String())
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, m)
}
