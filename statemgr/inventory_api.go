package statemgr

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
)

// inventoryRoutes registers ComponentEndpoints, ServiceEndpoints and Hardware.
func (a *API) inventoryRoutes(mux *http.ServeMux) {
	c := Base + "/Inventory/ComponentEndpoints"
	mux.HandleFunc("GET "+c, a.listCompEndpoints)
	mux.HandleFunc("DELETE "+c, a.deleteCompEndpoints)
	mux.HandleFunc("GET "+c+"/{xname}", a.getCompEndpoint)
	mux.HandleFunc("DELETE "+c+"/{xname}", a.deleteCompEndpoints)
	s := Base + "/Inventory/ServiceEndpoints"
	mux.HandleFunc("GET "+s, a.listServiceEndpoints)
	mux.HandleFunc("GET "+s+"/{service}", a.listServiceEndpoints)
	mux.HandleFunc("GET "+s+"/{service}/RedfishEndpoints/{xname}", a.getServiceEndpoint)
	h := Base + "/Inventory/Hardware"
	mux.HandleFunc("GET "+h, a.listHardware)
	mux.HandleFunc("GET "+h+"/{xname}", a.getHardware)
	mux.HandleFunc("GET "+h+"/History", a.hwHistory("id"))
	mux.HandleFunc("GET "+h+"/History/{key}", a.hwHistory("id"))
	f := Base + "/Inventory/HardwareByFRU"
	mux.HandleFunc("GET "+f, a.listFRUs)
	mux.HandleFunc("GET "+f+"/{fruid}", a.getFRU)
	mux.HandleFunc("GET "+f+"/History", a.hwHistory("fru_id"))
	mux.HandleFunc("GET "+f+"/History/{key}", a.hwHistory("fru_id"))
}

// rawQuery selects body from table where each (column, values) pair
// matches one of its values, ordered by order.
func (s *Store) rawQuery(ctx context.Context, table, order string, conds [][2]any) ([]json.RawMessage, error) {
	var where []string
	var args []any
	for _, c := range conds {
		vals := c[1].([]string)
		if len(vals) == 0 {
			continue
		}
		where = append(where, c[0].(string)+" IN ("+strings.TrimSuffix(strings.Repeat("?, ", len(vals)), ", ")+")")
		for _, v := range vals {
			args = append(args, v)
		}
	}
	q := `SELECT body FROM ` + table
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	rows, err := s.db.R.QueryContext(ctx, q+" ORDER BY "+order, args...)
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

// queryLists maps the allowed query parameters (lower case) to columns and
// returns the conditions; norm normalises the values of a parameter.
func queryLists(q url.Values, cols map[string]string, norm map[string]func(string) string) ([][2]any, error) {
	var out [][2]any
	for k, vs := range q {
		col, ok := cols[strings.ToLower(k)]
		if !ok {
			return nil, problem.Invalidf("query parameter %q: unknown filter", k)
		}
		if n := norm[strings.ToLower(k)]; n != nil {
			vs = append([]string(nil), vs...)
			for i := range vs {
				vs[i] = n(vs[i])
			}
		}
		out = append(out, [2]any{col, vs})
	}
	return out, nil
}

func rfNormType(v string) string {
	if t, ok := xname.ParseType(v); ok {
		return string(t)
	}
	return v
}

func (a *API) listCompEndpoints(w http.ResponseWriter, r *http.Request) {
	conds, err := queryLists(r.URL.Query(), map[string]string{"id": "id", "redfish_ep": "redfish_ep", "type": "type", "redfish_type": "redfish_type"},
		map[string]func(string) string{"id": xname.Normalize, "redfish_ep": xname.Normalize, "type": rfNormType})
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
	id := r.PathValue("xname")
	if id != "" {
		id = xname.Normalize(id)
	}
	n, err := a.store.deleteRows(r.Context(), "rf_component_endpoints", "id", id)
	if err == nil && n == 0 {
		err = problem.NotFoundf("component endpoint %s: none", id)
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, Response{Code: "0", Message: fmt.Sprintf("deleted %d entries", n)})
}

func (a *API) listServiceEndpoints(w http.ResponseWriter, r *http.Request) {
	conds, err := queryLists(r.URL.Query(), map[string]string{"redfish_ep": "redfish_ep", "service": "redfish_type"},
		map[string]func(string) string{"redfish_ep": xname.Normalize})
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

func (a *API) listHardware(w http.ResponseWriter, r *http.Request) {
	conds, err := queryLists(r.URL.Query(), map[string]string{"id": "id", "type": "type", "fruid": "fru_id",
		"manufacturer": "manufacturer", "partnumber": "part_number", "serialnumber": "serial_number"},
		map[string]func(string) string{"id": xname.Normalize, "type": rfNormType})
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
	id := xname.Normalize(r.PathValue("xname"))
	out, err := a.store.rawQuery(r.Context(), "rf_hw_locations", "id", [][2]any{{"id", []string{id}}})
	a.writeOne(w, r, out, err, "hardware location "+id)
}

func (a *API) listFRUs(w http.ResponseWriter, r *http.Request) {
	conds, err := queryLists(r.URL.Query(), map[string]string{"fruid": "fru_id", "type": "type"},
		map[string]func(string) string{"type": rfNormType})
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

// HWHistory is one hardware inventory event.
type HWHistory struct {
	ID        string    `json:"ID"`
	FRUID     string    `json:"FRUID"`
	Timestamp time.Time `json:"Timestamp"`
	EventType string    `json:"EventType"`
}

// HWHistoryArray is the history of one location or FRU.
type HWHistoryArray struct {
	ID      string      `json:"ID"`
	History []HWHistory `json:"History"`
}

// hwHistory serves the history grouped by key ("id" for locations,
// "fru_id" for FRUs), optionally of the one {key}.
func (a *API) hwHistory(key string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var vals []string
		if k := r.PathValue("key"); k != "" {
			if key == "id" {
				k = xname.Normalize(k)
			}
			vals = []string{k}
		}
		out, err := a.store.hwHistory(r.Context(), key, vals)
		if err == nil && vals != nil && len(out) == 0 {
			err = problem.NotFoundf("hardware history of %s: none", vals[0])
		}
		if err != nil {
			problem.Write(w, r, a.log, err)
			return
		}
		if vals != nil {
			httpserver.WriteJSON(w, http.StatusOK, out[0])
			return
		}
		httpserver.WriteJSON(w, http.StatusOK, map[string][]HWHistoryArray{"Components": out})
	}
}
