package inventory

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

// inventoryRoutes registers ComponentEndpoints, ServiceEndpoints and Hardware.
func (a *API) inventoryRoutes(mux *httpserver.Mux) {
	c := hsm.Base + "/Inventory/ComponentEndpoints"
	mux.HandleFunc("GET "+c, a.listCompEndpoints)
	mux.HandleFunc("DELETE "+c, a.deleteCompEndpoints)
	mux.HandleFunc("GET "+c+"/{xname}", a.getCompEndpoint)
	mux.HandleFunc("DELETE "+c+"/{xname}", a.deleteCompEndpoints)
	s := hsm.Base + "/Inventory/ServiceEndpoints"
	mux.HandleFunc("GET "+s, a.listServiceEndpoints)
	mux.HandleFunc("DELETE "+s, a.deleteServiceEndpoints)
	mux.HandleFunc("GET "+s+"/{service}", a.listServiceEndpoints)
	mux.HandleFunc("GET "+s+"/{service}/RedfishEndpoints/{xname}", a.getServiceEndpoint)
	mux.HandleFunc("DELETE "+s+"/{service}/RedfishEndpoints/{xname}", a.deleteServiceEndpoints)
	histByLocation := histKind{col: "id", param: "id", norm: core.NormID}
	histByFRU := histKind{col: "fru_id", param: "fruid", norm: func(v string) (string, bool) { return v, true }}
	h := hsm.Base + "/Inventory/Hardware"
	mux.HandleFunc("GET "+h, a.listHardware)
	mux.HandleFunc("POST "+h, a.postHardware)
	mux.HandleFunc("DELETE "+h, a.deleteHardware)
	mux.HandleFunc("GET "+h+"/{xname}", a.getHardware)
	mux.HandleFunc("DELETE "+h+"/{xname}", a.deleteHardware)
	mux.HandleFunc("GET "+h+"/Query/{xname}", a.queryHardware)
	mux.HandleFunc("GET "+h+"/History", a.hwHistory(histByLocation))
	mux.HandleFunc("DELETE "+h+"/History", a.deleteHWHistory(histByLocation))
	mux.HandleFunc("GET "+h+"/History/{key}", a.hwHistory(histByLocation))
	mux.HandleFunc("DELETE "+h+"/History/{key}", a.deleteHWHistory(histByLocation))
	f := hsm.Base + "/Inventory/HardwareByFRU"
	mux.HandleFunc("GET "+f, a.listFRUs)
	mux.HandleFunc("DELETE "+f, a.deleteFRUs)
	mux.HandleFunc("GET "+f+"/{fruid}", a.getFRU)
	mux.HandleFunc("DELETE "+f+"/{fruid}", a.deleteFRUs)
	mux.HandleFunc("GET "+f+"/History", a.hwHistory(histByFRU))
	mux.HandleFunc("GET "+f+"/History/{key}", a.hwHistory(histByFRU))
	mux.HandleFunc("DELETE "+f+"/History/{key}", a.deleteHWHistory(histByFRU))
}

// rawQuery selects body from table where each (column, values) pair
// matches one of its values, ordered by order.
func (s *Store) rawQuery(ctx context.Context, table, order string, conds [][2]any) ([]json.RawMessage, error) {
	where, args := inClauses(conds)
	rows, err := s.db.R.QueryContext(ctx, `SELECT body FROM `+table+sqlWhere(where)+" ORDER BY "+order, args...)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", table, err)
	}
	defer rows.Close()
	out := []json.RawMessage{}
	for rows.Next() {
		var b string
		if err := rows.Scan(&b); err != nil {
			return nil, fmt.Errorf("read %s: %w", table, err)
		}
		out = append(out, json.RawMessage(b))
	}
	return out, rows.Err()
}

// queryLists maps the allowed query parameters (any case) to columns and
// returns the conditions, one per column with the values of every spelling
// of its parameter; norm normalises the values of a parameter and rejects
// those it does not know. Other parameters are ignored, as shipped HSM
// ignores them, and returned so the caller logs them (core.LogIgnored).
func queryLists(q url.Values, cols map[string]string, norm map[string]func(string) (string, bool)) (conds [][2]any, ignored []string, err error) {
	byCol := map[string][]string{}
	for k, vs := range q {
		col, ok := cols[strings.ToLower(k)]
		if !ok {
			ignored = append(ignored, k)
			continue
		}
		for _, v := range vs {
			if n := norm[strings.ToLower(k)]; n != nil {
				nv, ok := n(v)
				if !ok {
					return nil, nil, problem.Invalidf("query parameter %s: invalid value %q", k, v)
				}
				v = nv
			}
			byCol[col] = append(byCol[col], v)
		}
	}
	var out [][2]any
	for _, col := range slices.Sorted(maps.Keys(byCol)) {
		out = append(out, [2]any{col, byCol[col]})
	}
	slices.Sort(ignored)
	return out, ignored, nil
}

func (a *API) listCompEndpoints(w http.ResponseWriter, r *http.Request) {
	conds, ignored, err := queryLists(r.URL.Query(), map[string]string{"id": "id", "redfish_ep": "redfish_ep", "type": "type", "redfish_type": "redfish_type"},
		map[string]func(string) (string, bool){"id": core.NormID, "redfish_ep": core.NormID, "type": core.NormType})
	core.LogIgnored(r, a.log, ignored)
	var out []json.RawMessage
	if err == nil {
		out, err = a.store.rawQuery(r.Context(), "rf_component_endpoints", "id", conds)
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, map[string][]json.RawMessage{"ComponentEndpoints": out})
}

// writeOne writes the single body the query found, or 404 naming what.
func (a *API) writeOne(w http.ResponseWriter, r *http.Request, out []json.RawMessage, err error, what string) {
	if err == nil && len(out) == 0 {
		err = problem.NotFoundf("%s: none", what)
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, out[0])
}

func (a *API) getCompEndpoint(w http.ResponseWriter, r *http.Request) {
	id := xname.Normalize(r.PathValue("xname"))
	out, err := a.store.rawQuery(r.Context(), "rf_component_endpoints", "id", [][2]any{{"id", []string{id}}})
	a.writeOne(w, r, out, err, "component endpoint "+id)
}

func (a *API) deleteCompEndpoints(w http.ResponseWriter, r *http.Request) {
	var conds [][2]any
	what := delAll()
	if id := r.PathValue("xname"); id != "" {
		id = xname.Normalize(id)
		conds, what = [][2]any{{"id", []string{id}}}, delOne("no such xname.")
	}
	n, err := a.store.deleteRows(r.Context(), "rf_component_endpoints", conds)
	a.deletedOrNotFound(w, r, n, err, what)
}

// deleteWhat says what a DELETE removes: one named resource (with HSM's 404
// detail when it does not exist) or a collection, or part of one.
type deleteWhat struct {
	one      bool
	notFound string
}

// DelAll is a DELETE of a collection: HSM answers 404 "no entries to delete"
// when there was nothing, else "deleted %d entries".
func delAll() deleteWhat { return deleteWhat{notFound: "no entries to delete"} }

// delOne is a DELETE of one resource; notFound is HSM's 404 detail.
func delOne(notFound string) deleteWhat { return deleteWhat{one: true, notFound: notFound} }

// deletedOrNotFound answers a DELETE that removed n rows: 200 with HSM's
// message, or 404 when there was nothing to remove.
func (a *API) deletedOrNotFound(w http.ResponseWriter, r *http.Request, n int64, err error, what deleteWhat) {
	if err == nil && n == 0 {
		err = problem.NotFoundf("%s", what.notFound)
	}
	switch {
	case err != nil:
		problem.Write(w, r, a.log, err)
	case what.one:
		core.WriteDeletedOne(w)
	default:
		core.WriteDeleted(w, n)
	}
}

func (a *API) listServiceEndpoints(w http.ResponseWriter, r *http.Request) {
	conds, ignored, err := queryLists(r.URL.Query(), map[string]string{"redfish_ep": "redfish_ep", "service": "redfish_type"},
		map[string]func(string) (string, bool){"redfish_ep": core.NormID})
	core.LogIgnored(r, a.log, ignored)
	if svc := r.PathValue("service"); svc != "" {
		conds = append(conds, [2]any{"redfish_type", []string{svc}})
	}
	var out []json.RawMessage
	if err == nil {
		out, err = a.store.rawQuery(r.Context(), "rf_service_endpoints", "redfish_type, redfish_ep", conds)
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, map[string][]json.RawMessage{"ServiceEndpoints": out})
}

func (a *API) getServiceEndpoint(w http.ResponseWriter, r *http.Request) {
	svc, id := r.PathValue("service"), xname.Normalize(r.PathValue("xname"))
	out, err := a.store.rawQuery(r.Context(), "rf_service_endpoints", "redfish_ep",
		[][2]any{{"redfish_type", []string{svc}}, {"redfish_ep", []string{id}}})
	a.writeOne(w, r, out, err, "service endpoint "+svc+" of "+id)
}

func (a *API) deleteServiceEndpoints(w http.ResponseWriter, r *http.Request) {
	var conds [][2]any
	what := delAll()
	if svc := r.PathValue("service"); svc != "" {
		id := xname.Normalize(r.PathValue("xname"))
		conds = [][2]any{{"redfish_type", []string{svc}}, {"redfish_ep", []string{id}}}
		what = delOne("no such service under redfish endpoint.")
	}
	n, err := a.store.deleteRows(r.Context(), "rf_service_endpoints", conds)
	a.deletedOrNotFound(w, r, n, err, what)
}

func (a *API) listHardware(w http.ResponseWriter, r *http.Request) {
	conds, ignored, err := queryLists(r.URL.Query(), map[string]string{"id": "id", "type": "type", "fruid": "fru_id",
		"manufacturer": "manufacturer", "partnumber": "part_number", "serialnumber": "serial_number"},
		map[string]func(string) (string, bool){"id": core.NormID, "type": core.NormType})
	core.LogIgnored(r, a.log, ignored)
	var out []json.RawMessage
	if err == nil {
		out, err = a.store.rawQuery(r.Context(), "rf_hw_locations", "id", conds)
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, out)
}

func (a *API) getHardware(w http.ResponseWriter, r *http.Request) {
	id, err := core.PathID(r)
	var out []json.RawMessage
	if err == nil {
		out, err = a.store.rawQuery(r.Context(), "rf_hw_locations", "id", [][2]any{{"id", []string{id}}})
	}
	a.writeOne(w, r, out, err, "hardware location "+id)
}

// deleteHardware deletes one location or all of them. Their FRUs and the
// history stay: the spec says FRUs are not deleted, and the history records
// what was seen, not what is stored now.
func (a *API) deleteHardware(w http.ResponseWriter, r *http.Request) {
	var conds [][2]any
	what := delAll()
	if r.PathValue("xname") != "" {
		id, err := core.PathID(r)
		if err != nil {
			problem.Write(w, r, a.log, err)
			return
		}
		conds, what = [][2]any{{"id", []string{id}}}, delOne("no such xname.")
	}
	n, err := a.store.deleteRows(r.Context(), "rf_hw_locations", conds)
	a.deletedOrNotFound(w, r, n, err, what)
}

func (a *API) listFRUs(w http.ResponseWriter, r *http.Request) {
	conds, ignored, err := queryLists(r.URL.Query(), map[string]string{"fruid": "fru_id", "type": "type",
		"manufacturer": "manufacturer", "partnumber": "part_number", "serialnumber": "serial_number"},
		map[string]func(string) (string, bool){"type": core.NormType})
	core.LogIgnored(r, a.log, ignored)
	var out []json.RawMessage
	if err == nil {
		out, err = a.store.rawQuery(r.Context(), "rf_hw_frus", "fru_id", conds)
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, out)
}

func (a *API) getFRU(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("fruid")
	out, err := a.store.rawQuery(r.Context(), "rf_hw_frus", "fru_id", [][2]any{{"fru_id", []string{id}}})
	a.writeOne(w, r, out, err, "FRU "+id)
}

// deleteFRUs deletes one FRU or all of them; a FRU still at a location is
// not deleted and the request is refused (409).
func (a *API) deleteFRUs(w http.ResponseWriter, r *http.Request) {
	id, what := r.PathValue("fruid"), delAll()
	if id != "" {
		what = delOne("no such FRU ID.")
	}
	n, err := a.store.deleteFRUs(r.Context(), id)
	a.deletedOrNotFound(w, r, n, err, what)
}
