package component

import (
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

// API serves /State/Components and /Defaults/NodeMaps over a Store.
type API struct {
	store *Store
	log   *slog.Logger
}

// NewAPI returns the handlers of store.
func NewAPI(store *Store, log *slog.Logger) *API { return &API{store: store, log: log} }

// Routes registers /State/Components/* and /Defaults/NodeMaps.
func (a *API) Routes(mux *httpserver.Mux) {
	c := hsm.Base + "/State/Components"
	mux.HandleFunc("GET "+c, a.listComponents)
	mux.HandleFunc("POST "+c, byAPI(a.postComponents))
	mux.HandleFunc("DELETE "+c, a.deleteComponents)
	mux.HandleFunc("GET "+c+"/{xname}", a.getComponent)
	mux.HandleFunc("PUT "+c+"/{xname}", byAPI(a.putComponent))
	mux.HandleFunc("DELETE "+c+"/{xname}", a.deleteComponent)
	mux.HandleFunc("GET "+c+"/ByNID/{nid}", a.getComponentByNID)
	mux.HandleFunc("POST "+c+"/Query", a.queryComponents)
	mux.HandleFunc("POST "+c+"/ByNID/Query", a.queryByNID)
	mux.HandleFunc("GET "+c+"/Query/{xname}", a.queryUnder)
	mux.HandleFunc("GET "+c+"/History", a.getHistory)
	mux.HandleFunc("GET "+c+"/History/{xname}", a.getHistoryOf)
	mux.HandleFunc("PATCH "+c+"/BulkStateData", byAPI(a.patchState(true)))
	mux.HandleFunc("PATCH "+c+"/{xname}/StateData", byAPI(a.patchState(false)))
	mux.HandleFunc("PATCH "+c+"/BulkFlagOnly", byAPI(a.patchFlag(true)))
	mux.HandleFunc("PATCH "+c+"/{xname}/FlagOnly", byAPI(a.patchFlag(false)))
	mux.HandleFunc("PATCH "+c+"/BulkEnabled", byAPI(a.patchEnabled(true)))
	mux.HandleFunc("PATCH "+c+"/{xname}/Enabled", byAPI(a.patchEnabled(false)))
	mux.HandleFunc("PATCH "+c+"/BulkSoftwareStatus", byAPI(a.patchSoftwareStatus(true)))
	mux.HandleFunc("PATCH "+c+"/{xname}/SoftwareStatus", byAPI(a.patchSoftwareStatus(false)))
	mux.HandleFunc("PATCH "+c+"/BulkRole", byAPI(a.patchRole(true)))
	mux.HandleFunc("PATCH "+c+"/{xname}/Role", byAPI(a.patchRole(false)))
	mux.HandleFunc("PATCH "+c+"/BulkNID", byAPI(a.patchNIDs))
	mux.HandleFunc("PATCH "+c+"/{xname}/NID", byAPI(a.patchNID))
	m := hsm.Base + "/Defaults/NodeMaps"
	mux.HandleFunc("GET "+m, a.getNodeMaps)
	mux.HandleFunc("POST "+m, a.postNodeMaps)
	mux.HandleFunc("DELETE "+m, a.deleteNodeMaps)
	mux.HandleFunc("GET "+m+"/{xname}", a.getNodeMap)
	mux.HandleFunc("PUT "+m+"/{xname}", a.putNodeMap)
	mux.HandleFunc("DELETE "+m+"/{xname}", a.deleteNodeMaps)
}

func (a *API) writeList(w http.ResponseWriter, r *http.Request, f core.Filter) {
	b, err := a.store.componentsJSON(r.Context(), f)
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	core.WriteRawJSON(w, b)
}

func (a *API) listComponents(w http.ResponseWriter, r *http.Request) {
	f, err := core.QueryFilter(r, a.log, a.store.vocab, core.ListParams)
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	a.writeList(w, r, f)
}

func (a *API) getComponent(w http.ResponseWriter, r *http.Request) {
	id, err := core.PathID(r)
	if err == nil {
		var c hsm.Component
		if c, err = a.store.Component(id); err == nil {
			httpserver.WriteJSON(w, http.StatusOK, c)
			return
		}
	}
	problem.Write(w, r, a.log, err)
}

func (a *API) getComponentByNID(w http.ResponseWriter, r *http.Request) {
	nid, err := strconv.Atoi(r.PathValue("nid"))
	if err != nil {
		problem.Write(w, r, a.log, problem.Invalidf("nid: %q is not an integer", r.PathValue("nid")))
		return
	}
	c, err := a.store.componentByNID(nid)
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, c)
}

type postComponentsBody struct {
	Components []hsm.Component `json:"Components"`
	Force      bool            `json:"Force"`
}

func (a *API) postComponents(w http.ResponseWriter, r *http.Request) {
	var body postComponentsBody
	if err := httpserver.ReadJSON(w, r, core.BulkLimit, &body); err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	if len(body.Components) == 0 {
		problem.Write(w, r, a.log, problem.Invalidf("Components: at least one component is required"))
		return
	}
	if err := a.store.UpsertComponents(r.Context(), body.Components, body.Force, a.log); err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

type putComponentBody struct {
	Component *hsm.Component `json:"Component"`
	Force     bool           `json:"Force"`
}

func (a *API) putComponent(w http.ResponseWriter, r *http.Request) {
	id, err := core.PathID(r)
	var body putComponentBody
	if err == nil {
		err = httpserver.ReadJSON(w, r, 0, &body)
	}
	if err == nil && body.Component == nil {
		err = problem.Invalidf("Component: required")
	}
	if err == nil {
		if body.Component.ID == "" {
			body.Component.ID = id
		}
		if xname.Normalize(body.Component.ID) != id {
			err = problem.Invalidf("Component.ID: %q does not match the path xname %s", body.Component.ID, id)
		}
	}
	if err == nil {
		err = a.store.UpsertComponents(r.Context(), []hsm.Component{*body.Component}, body.Force, a.log)
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (a *API) deleteComponent(w http.ResponseWriter, r *http.Request) {
	id, err := core.PathID(r)
	if err == nil {
		err = a.store.DeleteComponent(r.Context(), id)
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	core.WriteDeletedOne(w)
}

func (a *API) deleteComponents(w http.ResponseWriter, r *http.Request) {
	n, err := a.store.deleteAllComponents(r.Context())
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	core.WriteDeleted(w, n)
}

// queryBody is POST /State/Components/Query: the GET filters as JSON arrays.
type queryBody struct {
	ComponentIDs   []string `json:"ComponentIDs"`
	Partition      string   `json:"partition"`
	Group          string   `json:"group"`
	StateOnly      bool     `json:"stateonly"`
	FlagOnly       bool     `json:"flagonly"`
	RoleOnly       bool     `json:"roleonly"`
	NIDOnly        bool     `json:"nidonly"`
	Type           []string `json:"type"`
	State          []string `json:"state"`
	Flag           []string `json:"flag"`
	Enabled        []string `json:"enabled"`
	SoftwareStatus []string `json:"softwarestatus"`
	Role           []string `json:"role"`
	SubRole        []string `json:"subrole"`
	Subtype        []string `json:"subtype"`
	Arch           []string `json:"arch"`
	Class          []string `json:"class"`
	NID            []string `json:"nid"`
	NIDStart       []string `json:"nid_start"`
	NIDEnd         []string `json:"nid_end"`
}

func (q *queryBody) filter(v *core.Vocab) (core.Filter, error) {
	var f core.Filter
	p := map[string][]string{"id": q.ComponentIDs, "type": q.Type, "state": q.State, "flag": q.Flag,
		"enabled": q.Enabled, "softwarestatus": q.SoftwareStatus, "role": q.Role, "subrole": q.SubRole,
		"subtype": q.Subtype, "arch": q.Arch, "class": q.Class, "nid": q.NID, "nid_start": q.NIDStart, "nid_end": q.NIDEnd}
	if q.Partition != "" {
		p["partition"] = []string{q.Partition}
	}
	if q.Group != "" {
		p["group"] = []string{q.Group}
	}
	for name, on := range map[string]bool{"stateonly": q.StateOnly, "flagonly": q.FlagOnly, "roleonly": q.RoleOnly, "nidonly": q.NIDOnly} {
		if on {
			p[name] = []string{"true"}
		}
	}
	return f, f.Set(p, v.Get())
}

func (a *API) queryComponents(w http.ResponseWriter, r *http.Request) {
	var body queryBody
	err := httpserver.ReadJSON(w, r, core.BulkLimit, &body)
	var f core.Filter
	if err == nil {
		if f, err = body.filter(a.store.vocab); err != nil {
			err = problem.Invalidf("bad query param: %v", err)
		}
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	a.writeList(w, r, f)
}

// byNIDQueryBody is POST /State/Components/ByNID/Query: NID ranges plus
// every filter of the Query body (role, state, ...), which the shipped HSM
// applies too.
type byNIDQueryBody struct {
	NIDRanges []string `json:"NIDRanges"`
	queryBody
}

func (a *API) queryByNID(w http.ResponseWriter, r *http.Request) {
	var body byNIDQueryBody
	if err := httpserver.ReadJSON(w, r, core.BulkLimit, &body); err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	if len(body.NIDRanges) == 0 {
		problem.Write(w, r, a.log, problem.Invalidf("Missing NID ranges"))
		return
	}
	f, err := body.queryBody.filter(a.store.vocab)
	for _, rg := range body.NIDRanges {
		if err != nil {
			break
		}
		lo, hi, ok := strings.Cut(strings.TrimSpace(rg), "-")
		if !ok {
			hi = lo
		}
		a, errA := strconv.Atoi(strings.TrimSpace(lo))
		b, errB := strconv.Atoi(strings.TrimSpace(hi))
		if errA != nil || errB != nil || a > b {
			err = problem.Invalidf("bad query param: Argument was not a valid NID Range") // the shipped words
			break
		}
		f.NIDRanges = append(f.NIDRanges, [2]int{a, b})
		f.HasNID = true
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	a.writeList(w, r, f)
}

func (a *API) queryUnder(w http.ResponseWriter, r *http.Request) {
	raw := r.PathValue("xname")
	under := strings.ToLower(raw)
	if under != "all" && under != "all_comp" && under != "s0" {
		if !xname.Valid(raw) {
			problem.Write(w, r, a.log, problem.Invalidf("xname: %q is not a valid xname", raw))
			return
		}
		under = xname.Normalize(raw)
	}
	f, err := core.QueryFilter(r, a.log, a.store.vocab, core.ListParams)
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	f.Under = under
	a.writeList(w, r, f)
}
