package inventory

import (
	"net/http"
	"strconv"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/statemgr/hsm"
)

func (a *API) postDiscover(w http.ResponseWriter, r *http.Request) {
	var body discoverBody
	if r.ContentLength != 0 {
		if err := httpserver.ReadJSON(w, r, 0, &body); err != nil {
			problem.Write(w, r, a.log, err)
			return
		}
	}
	f := redfishEndpointFilter{}
	for i, x := range body.XNames {
		if !xname.Valid(x) { // 400 like the rest of HSM, not a 404 for an endpoint
			problem.Write(w, r, a.log, problem.Invalidf("xnames[%d]: %q is not a valid xname", i, x))
			return
		}
		f.ID = append(f.ID, xname.Normalize(x))
	}
	rows, err := a.store.rfEndpointRows(r.Context(), f)
	if err == nil && len(rows) < len(f.ID) {
		err = missingEndpoint(f.ID, rows)
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	ids := make([]string, 0, len(rows))
	for _, row := range rows {
		ids = append(ids, row.ep.ID)
	}
	if err := a.rf.Enqueue(r.Context(), ids, body.Force); err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, []hsm.ResourceURI{{URI: hsm.Base + "/Inventory/DiscoveryStatus/0"}})
}

func missingEndpoint(want []string, rows []rfRow) error {
	have := map[string]bool{}
	for _, row := range rows {
		have[row.ep.ID] = true
	}
	for i, id := range want {
		if !have[id] {
			return problem.NotFoundf("xnames[%d]: redfish endpoint %s: none", i, id)
		}
	}
	return nil
}

func (a *API) getDiscoveryStatus(w http.ResponseWriter, r *http.Request) {
	st := a.rf.Status()
	id := r.PathValue("id")
	if id == "" {
		httpserver.WriteJSON(w, http.StatusOK, []DiscoveryStatus{st})
		return
	}
	switch n, err := strconv.ParseUint(id, 10, 32); {
	case err != nil:
		problem.Write(w, r, a.log, problem.Invalidf("DiscoveryStatus ID not an unsigned integer"))
		return
	case n != 0:
		problem.Write(w, r, a.log, problem.NotFoundf("no such DiscoveryStatus ID."))
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, st)
}
