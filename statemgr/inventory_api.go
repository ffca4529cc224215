package statemgr

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/statemgr/redfish"
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
	mux.HandleFunc("DELETE "+s, a.deleteServiceEndpoints)
	mux.HandleFunc("GET "+s+"/{service}", a.listServiceEndpoints)
	mux.HandleFunc("GET "+s+"/{service}/RedfishEndpoints/{xname}", a.getServiceEndpoint)
	mux.HandleFunc("DELETE "+s+"/{service}/RedfishEndpoints/{xname}", a.deleteServiceEndpoints)
	histByLocation := histKind{col: "id", param: "id", norm: normID}
	histByFRU := histKind{col: "fru_id", param: "fruid", norm: func(v string) (string, bool) { return v, true }}
	h := Base + "/Inventory/Hardware"
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
	f := Base + "/Inventory/HardwareByFRU"
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
// those it does not know.
func queryLists(q url.Values, cols map[string]string, norm map[string]func(string) (string, bool)) ([][2]any, error) {
	byCol := map[string][]string{}
	for k, vs := range q {
		col, ok := cols[strings.ToLower(k)]
		if !ok {
			return nil, problem.Invalidf("query parameter %q: unknown filter", k)
		}
		for _, v := range vs {
			if n := norm[strings.ToLower(k)]; n != nil {
				nv, ok := n(v)
				if !ok {
					return nil, problem.Invalidf("query parameter %s: invalid value %q", k, v)
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
	return out, nil
}

func (a *API) listCompEndpoints(w http.ResponseWriter, r *http.Request) {
	conds, err := queryLists(r.URL.Query(), map[string]string{"id": "id", "redfish_ep": "redfish_ep", "type": "type", "redfish_type": "redfish_type"},
		map[string]func(string) (string, bool){"id": normID, "redfish_ep": normID, "type": normType})
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
	what := "component endpoints"
	if id := r.PathValue("xname"); id != "" {
		id = xname.Normalize(id)
		conds, what = [][2]any{{"id", []string{id}}}, "component endpoint "+id
	}
	n, err := a.store.deleteRows(r.Context(), "rf_component_endpoints", conds)
	a.writeDeleted(w, r, n, err, what)
}

// writeDeleted answers a DELETE that removed n rows: 200 with the count, or
// 404 naming what when there was nothing to remove.
func (a *API) writeDeleted(w http.ResponseWriter, r *http.Request, n int64, err error, what string) {
	if err == nil && n == 0 {
		err = problem.NotFoundf("%s: none", what)
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	writeDeleted(w, n)
}

func (a *API) listServiceEndpoints(w http.ResponseWriter, r *http.Request) {
	conds, err := queryLists(r.URL.Query(), map[string]string{"redfish_ep": "redfish_ep", "service": "redfish_type"},
		map[string]func(string) (string, bool){"redfish_ep": normID})
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
	what := "service endpoints"
	if svc := r.PathValue("service"); svc != "" {
		id := xname.Normalize(r.PathValue("xname"))
		conds = [][2]any{{"redfish_type", []string{svc}}, {"redfish_ep", []string{id}}}
		what = "service endpoint " + svc + " of " + id
	}
	n, err := a.store.deleteRows(r.Context(), "rf_service_endpoints", conds)
	a.writeDeleted(w, r, n, err, what)
}

func (a *API) listHardware(w http.ResponseWriter, r *http.Request) {
	conds, err := queryLists(r.URL.Query(), map[string]string{"id": "id", "type": "type", "fruid": "fru_id",
		"manufacturer": "manufacturer", "partnumber": "part_number", "serialnumber": "serial_number"},
		map[string]func(string) (string, bool){"id": normID, "type": normType})
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
	id, err := pathID(r)
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
	what := "hardware locations"
	if r.PathValue("xname") != "" {
		id, err := pathID(r)
		if err != nil {
			problem.Write(w, r, a.log, err)
			return
		}
		conds, what = [][2]any{{"id", []string{id}}}, "hardware location "+id
	}
	n, err := a.store.deleteRows(r.Context(), "rf_hw_locations", conds)
	a.writeDeleted(w, r, n, err, what)
}

func (a *API) listFRUs(w http.ResponseWriter, r *http.Request) {
	conds, err := queryLists(r.URL.Query(), map[string]string{"fruid": "fru_id", "type": "type",
		"manufacturer": "manufacturer", "partnumber": "part_number", "serialnumber": "serial_number"},
		map[string]func(string) (string, bool){"type": normType})
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
	id, what := r.PathValue("fruid"), "FRUs"
	if id != "" {
		what = "FRU " + id
	}
	n, err := a.store.deleteFRUs(r.Context(), id)
	a.writeDeleted(w, r, n, err, what)
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

// histKind says how one of the two history views is keyed.
type histKind struct {
	col   string // rf_hw_history column the view groups by
	param string // query parameter selecting keys on the collection
	norm  func(string) (string, bool)
}

// key returns the normalised {key} path value, "" on the collection; a
// value norm refuses is ErrInvalid.
func (k histKind) key(r *http.Request) (string, error) {
	v := r.PathValue("key")
	if v == "" {
		return "", nil
	}
	n, ok := k.norm(v)
	if !ok {
		return "", problem.Invalidf("xname: %q is not a valid xname", v)
	}
	return n, nil
}

// hwHistory serves the history grouped by k, optionally of the one {key},
// filtered by eventtype and the starttime/endtime window (both inclusive)
// and, on the collection, by k.param.
func (a *API) hwHistory(k histKind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		key, err := k.key(r)
		q := r.URL.Query()
		var from, to string
		if err == nil {
			from, to, err = timeWindow(q)
		}
		cols := map[string]string{"eventtype": "event_type"}
		norm := map[string]func(string) (string, bool){"eventtype": normHWEvent, k.param: k.norm}
		if key == "" {
			cols[k.param] = k.col
		}
		var conds [][2]any
		if err == nil {
			conds, err = queryLists(q, cols, norm)
		}
		if err != nil {
			problem.Write(w, r, a.log, err)
			return
		}
		if key != "" {
			one, err := a.store.hwHistoryOf(r.Context(), k.col, key, conds, from, to)
			a.writeResult(w, r, one, err)
			return
		}
		out, err := a.store.hwHistory(r.Context(), k.col, conds, from, to)
		a.writeResult(w, r, map[string][]HWHistoryArray{"Components": out}, err)
	}
}

// writeResult writes v with 200, or err as a problem.
func (a *API) writeResult(w http.ResponseWriter, r *http.Request, v any, err error) {
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, v)
}

// deleteHWHistory deletes the history of {key}, or all history (of
// locations and FRUs alike: it is one record) on the collection.
func (a *API) deleteHWHistory(k histKind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var conds [][2]any
		what := "hardware history"
		key, err := k.key(r)
		if err != nil {
			problem.Write(w, r, a.log, err)
			return
		}
		if key != "" {
			conds, what = [][2]any{{k.col, []string{key}}}, "hardware history of "+key
		}
		n, err := a.store.deleteRows(r.Context(), "rf_hw_history", conds)
		a.writeDeleted(w, r, n, err, what)
	}
}

// timeWindow removes starttime and endtime from q and returns them as
// stored timestamps, "" when absent.
func timeWindow(q url.Values) (from, to string, err error) {
	for k, vs := range q {
		var dst *string
		switch strings.ToLower(k) {
		case "starttime":
			dst = &from
		case "endtime":
			dst = &to
		default:
			continue
		}
		delete(q, k)
		t, err := parseTime(k, vs[0])
		if err != nil {
			return "", "", err
		}
		*dst = t.UTC().Format(tsFormat)
	}
	return from, to, nil
}

func normHWEvent(v string) (string, bool) {
	for _, e := range []string{HWEventAdded, HWEventRemoved, HWEventScanned, HWEventDetected} {
		if strings.EqualFold(v, e) {
			return e, true
		}
	}
	return "", false
}

// hwKind says how locations of one HMS type appear in the hardware inventory.
type hwKind struct {
	array  string     // HWInventory array (and array of the nesting parent) holding them
	disc   string     // suffix of HWInventoryByLocationType and HWInventoryByFRUType
	parent xname.Type // type whose location nests them in a Hierarchical inventory
}

// hwKinds are the types HWInventory has an array for, as the spec lists them;
// read only. Locations of other types are not shown by the Query route and
// not accepted by POST.
var hwKinds = map[xname.Type]hwKind{
	xname.Cabinet:                  {array: "Cabinets", disc: "Cabinet"},
	xname.Chassis:                  {array: "Chassis", disc: "Chassis", parent: xname.Cabinet},
	xname.ComputeModule:            {array: "ComputeModules", disc: "ComputeModule", parent: xname.Chassis},
	xname.RouterModule:             {array: "RouterModules", disc: "RouterModule", parent: xname.Chassis},
	xname.NodeEnclosure:            {array: "NodeEnclosures", disc: "NodeEnclosure", parent: xname.ComputeModule},
	xname.HSNBoard:                 {array: "HSNBoards", disc: "HSNBoard", parent: xname.RouterModule},
	xname.MgmtSwitch:               {array: "MgmtSwitches", disc: "MgmtSwitch"},
	xname.MgmtHLSwitch:             {array: "MgmtHLSwitches", disc: "MgmtHLSwitch"},
	xname.CDUMgmtSwitch:            {array: "CDUMgmtSwitches", disc: "CDUMgmtSwitch"},
	xname.Node:                     {array: "Nodes", disc: "Node"},
	xname.Processor:                {array: "Processors", disc: "Processor", parent: xname.Node},
	xname.NodeAccel:                {array: "NodeAccels", disc: "NodeAccel", parent: xname.Node},
	xname.Drive:                    {array: "Drives", disc: "Drive", parent: xname.Node},
	xname.Memory:                   {array: "Memory", disc: "Memory", parent: xname.Node},
	xname.CabinetPDU:               {array: "CabinetPDUs", disc: "PDU"},
	xname.CabinetPDUOutlet:         {array: "CabinetPDUPowerConnectors", disc: "Outlet", parent: xname.CabinetPDU},
	xname.CabinetPDUPowerConnector: {array: "CabinetPDUPowerConnectors", disc: "Outlet", parent: xname.CabinetPDU},
	xname.CMMRectifier:             {array: "CMMRectifiers", disc: "CMMRectifier"},
	xname.NodeAccelRiser:           {array: "NodeAccelRisers", disc: "NodeAccelRiser", parent: xname.Node},
	xname.NodeHsnNic:               {array: "NodeHsnNICs", disc: "HSNNIC", parent: xname.Node},
	xname.NodeEnclosurePowerSupply: {array: "NodeEnclosurePowerSupplies", disc: "NodeEnclosurePowerSupply"},
	xname.NodeBMC:                  {array: "NodeBMC", disc: "NodeBMC"},
	xname.RouterBMC:                {array: "RouterBMC", disc: "RouterBMC"},
}

// hwArrays are the arrays of an HWInventory, in the spec's order.
var hwArrays = []string{"Cabinets", "Chassis", "ComputeModules", "RouterModules", "NodeEnclosures", "HSNBoards",
	"MgmtSwitches", "MgmtHLSwitches", "CDUMgmtSwitches", "Nodes", "Processors", "NodeAccels", "Drives", "Memory",
	"CabinetPDUs", "CabinetPDUPowerConnectors", "CMMRectifiers", "NodeAccelRisers", "NodeHsnNICs",
	"NodeEnclosurePowerSupplies", "NodeBMC", "RouterBMC"}

// The formats of an HWInventory.
const (
	hwFullyFlat     = "FullyFlat"
	hwNestNodesOnly = "NestNodesOnly"
	hwHierarchical  = "Hierarchical"
)

// queryHardware serves GET /Inventory/Hardware/Query/{xname}: an HWInventory
// of the locations parseHWQuery selects, 404 when there are none.
func (a *API) queryHardware(w http.ResponseWriter, r *http.Request) {
	q, format, err := parseHWQuery(r)
	var locs []hwLoc
	if err == nil {
		locs, err = a.store.hwQueryLocs(r.Context(), q)
	}
	if err == nil && len(locs) == 0 {
		err = problem.NotFoundf("hardware inventory of %s: none", q.target)
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, newHWInventory(q.target, format, locs))
}

// parseHWQuery reads the {xname} and the type, children, parents,
// partition and format parameters of a Query; bad ones are ErrInvalid
// naming them.
func parseHWQuery(r *http.Request) (hwQuery, string, error) {
	raw := r.PathValue("xname")
	q, format := hwQuery{target: strings.ToLower(strings.TrimSpace(raw)), children: true}, hwNestNodesOnly
	if q.target != "s0" && q.target != "all" && q.target != "all_comp" {
		if !xname.Valid(raw) {
			return q, "", problem.Invalidf("xname: %q is not a valid xname", raw)
		}
		q.target = xname.Normalize(raw)
	}
	for k, vs := range r.URL.Query() {
		var err error
		switch name := strings.ToLower(k); name {
		case "type":
			err = parseMatch(name, vs, &q.types, normType)
		case "children", "parents":
			dst := map[string]*bool{"children": &q.children, "parents": &q.parents}[name]
			for _, v := range vs {
				if *dst, err = strconv.ParseBool(v); err != nil {
					return q, "", problem.Invalidf("query parameter %s: %q is not a boolean", k, v)
				}
			}
		case "partition":
			for _, v := range vs {
				if xname.TypeOf(v) != xname.Partition {
					return q, "", problem.Invalidf("query parameter %s: %q is not a partition (p#.#)", k, v)
				}
				q.partitions = append(q.partitions, xname.Normalize(v))
			}
		case "format":
			i := slices.IndexFunc([]string{hwFullyFlat, hwNestNodesOnly, hwHierarchical}, func(f string) bool { return strings.EqualFold(f, vs[0]) })
			if i < 0 || len(vs) > 1 {
				return q, "", problem.Invalidf("query parameter %s: invalid value %q", k, strings.Join(vs, ","))
			}
			format = []string{hwFullyFlat, hwNestNodesOnly, hwHierarchical}[i]
		default:
			err = problem.Invalidf("query parameter %q: unknown filter", k)
		}
		if err != nil {
			return q, "", err
		}
	}
	return q, format, nil
}

// hwNode is a location of an HWInventory with the locations nested in it.
type hwNode struct {
	body   json.RawMessage
	nested map[string][]*hwNode
}

// MarshalJSON writes the stored body with the nested arrays added to it.
func (n *hwNode) MarshalJSON() ([]byte, error) {
	if len(n.nested) == 0 {
		return n.body, nil
	}
	b := bytes.TrimSpace(n.body)
	b = slices.Clip(b[:len(b)-1]) // without its closing brace; appending copies
	for _, name := range hwArrays {
		kids, ok := n.nested[name]
		if !ok {
			continue
		}
		arr, err := json.Marshal(kids)
		if err != nil {
			return nil, err
		}
		if b[len(b)-1] != '{' {
			b = append(b, ',')
		}
		b = append(append(append(b, '"'), name...), `":`...)
		b = append(b, arr...)
	}
	return append(b, '}'), nil
}

// hwInventory is HMS's HWInventory: the query target, the format and every
// array, empty ones included.
type hwInventory struct {
	xname, format string
	arrays        map[string][]*hwNode
}

// MarshalJSON writes XName, Format and the arrays in the spec's order.
func (inv hwInventory) MarshalJSON() ([]byte, error) {
	x, _ := json.Marshal(inv.xname)
	f, _ := json.Marshal(inv.format)
	b := append(append(append([]byte(`{"XName":`), x...), `,"Format":`...), f...)
	for _, name := range hwArrays {
		arr, err := json.Marshal(append([]*hwNode{}, inv.arrays[name]...))
		if err != nil {
			return nil, err
		}
		b = append(append(append(append(b, `,"`...), name...), `":`...), arr...)
	}
	return append(b, '}'), nil
}

// newHWInventory arranges locs (in ID order, so a parent comes before what
// it holds) in format: FullyFlat puts each in the array of its type;
// NestNodesOnly puts node subcomponents in their node when the node is in
// locs; Hierarchical nests every type the spec nests in its parent that is
// in locs. Types HWInventory has no array for are left out.
func newHWInventory(target, format string, locs []hwLoc) hwInventory {
	inv := hwInventory{xname: target, format: format, arrays: map[string][]*hwNode{}}
	byID := map[string]*hwNode{}
	for _, l := range locs {
		k, ok := hwKinds[xname.Type(l.typ)]
		if !ok {
			continue
		}
		n := &hwNode{body: l.body}
		byID[l.id] = n
		var parent *hwNode
		if format == hwHierarchical || (format == hwNestNodesOnly && k.parent == xname.Node) {
			for _, a := range ancestors(l.id) {
				if xname.TypeOf(a) == k.parent {
					parent = byID[a]
					break
				}
			}
		}
		if parent == nil {
			inv.arrays[k.array] = append(inv.arrays[k.array], n)
			continue
		}
		if parent.nested == nil {
			parent.nested = map[string][]*hwNode{}
		}
		parent.nested[k.array] = append(parent.nested[k.array], n)
	}
	return inv
}

// postHardware creates or updates the locations of {"Hardware":[...]} and
// their FRUs as a discovery walk does (history included). Every entry is
// checked first; one bad entry stores nothing.
func (a *API) postHardware(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Hardware []map[string]json.RawMessage `json:"Hardware"`
	}
	err := httpserver.ReadJSON(w, r, bulkLimit, &body)
	if err == nil && len(body.Hardware) == 0 {
		err = problem.Invalidf("Hardware: at least one location is required")
	}
	locs := make([]hwRow, 0, len(body.Hardware))
	seen := map[string]bool{}
	for i := 0; err == nil && i < len(body.Hardware); i++ {
		var loc hwRow
		if loc, err = hwFromPost(fmt.Sprintf("Hardware[%d]", i), body.Hardware[i]); err == nil && seen[loc.id] {
			err = problem.Invalidf("Hardware[%d].ID: %s is given twice", i, loc.id)
		}
		seen[loc.id] = true
		locs = append(locs, loc)
	}
	if err == nil {
		err = a.store.postHardware(r.Context(), locs)
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	msg := "created or updated 1 entry"
	if len(locs) != 1 {
		msg = fmt.Sprintf("created or updated %d entries", len(locs))
	}
	httpserver.WriteJSON(w, http.StatusOK, Response{Code: "0", Message: msg})
}

// hwFromPost checks one posted location (at names it in errors) and
// completes it as discovery would: Type, Ordinal and the discriminators
// from its xname, Status from whether it has a PopulatedFRU, a FRUID made
// the way discovery makes one when none is given. Fields other than those
// of the spec and the *LocationInfo / *FRUInfo objects are dropped.
func hwFromPost(at string, in map[string]json.RawMessage) (hwRow, error) {
	id, err := jsonString(at+".ID", in["ID"])
	if err != nil {
		return hwRow{}, err
	}
	if !xname.Valid(id) {
		return hwRow{}, problem.Invalidf("%s.ID: %q is not a valid xname", at, id)
	}
	id = xname.Normalize(id)
	t := xname.TypeOf(id)
	k, ok := hwKinds[t]
	if !ok {
		return hwRow{}, problem.Invalidf("%s.ID: %s is a %s, which has no hardware inventory type", at, id, t)
	}
	loc := map[string]any{"ID": id, "Type": string(t), "HWInventoryByLocationType": "HWInvByLoc" + k.disc}
	if err := checkSame(at, in, loc, "Type", "HWInventoryByLocationType"); err != nil {
		return hwRow{}, err
	}
	x, _ := xname.Parse(id)
	nums := x.Numbers()
	loc["Ordinal"] = nums[len(nums)-1]
	if v := in["Ordinal"]; !isNull(v) {
		var ord int
		if json.Unmarshal(v, &ord) != nil || ord < 0 {
			return hwRow{}, problem.Invalidf("%s.Ordinal: %s is not a non-negative integer", at, v)
		}
		loc["Ordinal"] = ord
	}
	if err := keepInfo(at, in, loc, "LocationInfo"); err != nil {
		return hwRow{}, err
	}
	row := hwRow{id: id, typ: string(t), loc: loc}
	loc["Status"] = redfish.StateEmpty
	if v := in["PopulatedFRU"]; !isNull(v) {
		loc["Status"] = redfish.StatePopulated
		if err := fruFromPost(at+".PopulatedFRU", v, k, id, &row); err != nil {
			return hwRow{}, err
		}
		loc["PopulatedFRU"] = row.fru
	}
	return row, checkSame(at, in, loc, "Status")
}

// fruFromPost checks the PopulatedFRU v of location id and sets the FRU of row.
func fruFromPost(at string, v json.RawMessage, k hwKind, id string, row *hwRow) error {
	var in map[string]json.RawMessage
	if err := json.Unmarshal(v, &in); err != nil {
		return problem.Invalidf("%s: expected an object", at)
	}
	fru := map[string]any{"Type": row.typ, "HWInventoryByFRUType": "HWInvByFRU" + k.disc}
	if err := checkSame(at, in, fru, "Type", "HWInventoryByFRUType"); err != nil {
		return err
	}
	if err := keepInfo(at, in, fru, "FRUInfo"); err != nil {
		return err
	}
	for name, v := range in {
		if !strings.HasSuffix(name, "FRUInfo") || row.sn != "" {
			continue
		}
		var ident struct{ Manufacturer, PartNumber, SerialNumber string }
		if err := json.Unmarshal(v, &ident); err != nil {
			return problem.Invalidf("%s.%s: Manufacturer, PartNumber and SerialNumber must be strings", at, name)
		}
		row.manu, row.pn, row.sn = ident.Manufacturer, ident.PartNumber, ident.SerialNumber
	}
	for _, name := range []string{"FRUID", "FRUSubtype"} {
		s, err := jsonString(at+"."+name, in[name])
		if err != nil && !isNull(in[name]) {
			return err
		}
		if s != "" {
			fru[name] = s
		}
	}
	if fru["FRUID"] == nil {
		fru["FRUID"] = fruIDOf(xname.Type(row.typ), id, row.manu, row.pn, row.sn)
	}
	row.fru, row.fruID, row.fruType = fru, fru["FRUID"].(string), row.typ
	return nil
}

// fruIDOf is the FRU ID discovery gives a part (the rule of the redfish
// package): <Type>.<Manufacturer>.<PartNumber>.<SerialNumber>, or
// FRUIDfor<xname> without a serial number.
func fruIDOf(t xname.Type, id, manufacturer, part, serial string) string {
	if strings.TrimSpace(serial) == "" {
		return "FRUIDfor" + id
	}
	clean := func(s string) string { return strings.Join(strings.Fields(s), "_") }
	return string(t) + "." + clean(manufacturer) + "." + clean(part) + "." + clean(serial)
}

// checkSame refuses a field of in that is given but differs (in case) from
// the value it must have, set in out.
func checkSame(at string, in map[string]json.RawMessage, out map[string]any, fields ...string) error {
	for _, f := range fields {
		if isNull(in[f]) {
			continue
		}
		s, err := jsonString(at+"."+f, in[f])
		if err != nil {
			return err
		}
		if !strings.EqualFold(s, out[f].(string)) {
			return problem.Invalidf("%s.%s: %q, but %s is %q", at, f, s, at, out[f])
		}
	}
	return nil
}

// keepInfo copies the *<suffix> fields (the Redfish details) of in to out;
// each must be an object.
func keepInfo(at string, in map[string]json.RawMessage, out map[string]any, suffix string) error {
	for name, v := range in {
		if !strings.HasSuffix(name, suffix) || isNull(v) {
			continue
		}
		if b := bytes.TrimSpace(v); len(b) == 0 || b[0] != '{' {
			return problem.Invalidf("%s.%s: expected an object", at, name)
		}
		out[name] = v
	}
	return nil
}

// jsonString decodes the JSON string v; a missing one is ErrInvalid naming field.
func jsonString(field string, v json.RawMessage) (string, error) {
	var s string
	if isNull(v) {
		return "", problem.Invalidf("%s: required", field)
	}
	if err := json.Unmarshal(v, &s); err != nil {
		return "", problem.Invalidf("%s: expected a string, got %s", field, v)
	}
	return s, nil
}

func isNull(v json.RawMessage) bool {
	b := bytes.TrimSpace(v)
	return len(b) == 0 || string(b) == "null"
}
