package inventory

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
)

// API serves the RedfishEndpoints, discovery and the Redfish inventory
// (ComponentEndpoints, ServiceEndpoints, Hardware) of a Discovery's store.
type API struct {
	store *Store
	log   *slog.Logger
	rf    *Discovery
}

// NewAPI returns the handlers of disc and its store.
func NewAPI(disc *Discovery, log *slog.Logger) *API {
	return &API{store: disc.store, log: log, rf: disc}
}

// Routes registers the RedfishEndpoint, discovery and Redfish inventory
// routes.
func (a *API) Routes(mux *httpserver.Mux) {
	e := hsm.Base + "/Inventory/RedfishEndpoints"
	mux.HandleFunc("GET "+e, a.listRFEndpoints)
	mux.HandleFunc("POST "+e, a.postRFEndpoints)
	mux.HandleFunc("DELETE "+e, a.deleteRFEndpoints)
	mux.HandleFunc("GET "+e+"/{xname}", a.getRFEndpoint)
	mux.HandleFunc("PUT "+e+"/{xname}", a.putRFEndpoint)
	mux.HandleFunc("PATCH "+e+"/{xname}", a.patchRFEndpoint)
	mux.HandleFunc("DELETE "+e+"/{xname}", a.deleteRFEndpoints)
	mux.HandleFunc("GET "+e+"/Query/{xname}", a.queryRFEndpoints)
	mux.HandleFunc("GET "+hsm.Base+"/Inventory/RedfishEndpointCredentials", a.getCredentials)
	mux.HandleFunc("POST "+hsm.Base+"/Inventory/Discover", a.postDiscover)
	mux.HandleFunc("GET "+hsm.Base+"/Inventory/DiscoveryStatus", a.getDiscoveryStatus)
	mux.HandleFunc("GET "+hsm.Base+"/Inventory/DiscoveryStatus/{id}", a.getDiscoveryStatus)
	a.inventoryRoutes(mux)
}

// public returns the endpoint of row as GET shows it: User, never Password.
func (a *API) public(row rfRow) hsm.RedfishEndpoint {
	ep := row.ep
	ep.Password = ""
	if c, err := a.rf.openCred(row); err == nil {
		ep.User = c.User
	}
	return ep
}

func (a *API) listRFEndpoints(w http.ResponseWriter, r *http.Request) {
	rows, err := a.filteredRFRows(r)
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	a.writeRFList(w, rows)
}

// filteredRFRows reads the endpoint rows r's query selects.
func (a *API) filteredRFRows(r *http.Request) ([]rfRow, error) {
	f, err := parseRedfishEndpointFilter(r.URL.Query())
	core.LogIgnored(r, a.log, f.ignored)
	if err != nil {
		return nil, err
	}
	return a.store.rfEndpointRows(r.Context(), f)
}

func (a *API) writeRFList(w http.ResponseWriter, rows []rfRow) {
	out := hsm.RedfishEndpointList{RedfishEndpoints: make([]hsm.RedfishEndpoint, 0, len(rows))}
	for _, row := range rows {
		out.RedfishEndpoints = append(out.RedfishEndpoints, a.public(row))
	}
	httpserver.WriteJSON(w, http.StatusOK, out)
}

// postRFBody is one endpoint or {"RedfishEndpoints":[...]}.
type postRFBody struct {
	hsm.RedfishEndpoint
	RedfishEndpoints []hsm.RedfishEndpoint `json:"RedfishEndpoints"`
}

func (a *API) postRFEndpoints(w http.ResponseWriter, r *http.Request) {
	var body postRFBody
	if err := httpserver.ReadJSON(w, r, core.BulkLimit, &body); err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	eps, prefix := body.RedfishEndpoints, "RedfishEndpoints[%d]."
	if len(eps) == 0 {
		eps, prefix = []hsm.RedfishEndpoint{body.RedfishEndpoint}, ""
	}
	rows := make([]rfRow, 0, len(eps))
	seen := map[string]int{}
	var discover []string
	out := make([]hsm.ResourceURI, 0, len(eps))
	for i, ep := range eps {
		field := prefix
		if prefix != "" {
			field = fmt.Sprintf(prefix, i)
		}
		row, err := a.newRFRow(field, ep)
		if err == nil {
			if j, dup := seen[row.ep.ID]; dup {
				err = problem.Invalidf("%sID: %s is also RedfishEndpoints[%d]", field, row.ep.ID, j)
			}
		}
		if err != nil {
			problem.Write(w, r, a.log, err)
			return
		}
		seen[row.ep.ID] = i
		rows = append(rows, row)
		out = append(out, hsm.ResourceURI{URI: hsm.Base + "/Inventory/RedfishEndpoints/" + row.ep.ID})
		if row.ep.RediscoverOnUpdate {
			discover = append(discover, row.ep.ID)
		}
	}
	a.rf.registering()
	if err := a.store.insertRFEndpoints(r.Context(), rows); err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	if err := a.rf.Enqueue(r.Context(), discover, false); err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusCreated, out)
}

// newRFRow validates ep and seals its credentials. DiscoveryInfo is not
// taken from the client.
func (a *API) newRFRow(field string, ep hsm.RedfishEndpoint) (rfRow, error) {
	ep.DiscoveryInfo = hsm.DiscoveryInfo{}
	if err := normEndpoint(field, &ep); err != nil {
		return rfRow{}, err
	}
	cred, err := a.rf.sealCred(ep.ID, rfCred{User: ep.User, Password: ep.Password})
	if err != nil {
		return rfRow{}, err
	}
	ep.User, ep.Password = "", ""
	return rfRow{ep: ep, cred: cred}, nil
}

func (a *API) getRFEndpoint(w http.ResponseWriter, r *http.Request) {
	row, err := a.store.rfEndpointRow(r.Context(), xname.Normalize(r.PathValue("xname")))
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, a.public(row))
}

// queryRFEndpoints serves Query/{xname}: the endpoints at or below xname, or all.
func (a *API) queryRFEndpoints(w http.ResponseWriter, r *http.Request) {
	q := r.PathValue("xname")
	if q != "all" && !xname.Valid(q) {
		problem.Write(w, r, a.log, problem.Invalidf("xname: %q is not a valid xname", q))
		return
	}
	rows, err := a.store.rfEndpointRows(r.Context(), redfishEndpointFilter{})
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	if q != "all" {
		q = xname.Normalize(q)
		kept := rows[:0]
		for _, row := range rows {
			if isAtOrBelow(row.ep.ID, q) {
				kept = append(kept, row)
			}
		}
		rows = kept
	}
	a.writeRFList(w, rows)
}

// isAtOrBelow reports whether id is anc or one of its descendants.
func isAtOrBelow(id, anc string) bool {
	for ; id != ""; id = xname.Parent(id) {
		if id == anc {
			return true
		}
		if p := xname.Parent(id); p == id {
			return false
		}
	}
	return false
}

func (a *API) putRFEndpoint(w http.ResponseWriter, r *http.Request) {
	var ep hsm.RedfishEndpoint
	if err := httpserver.ReadJSON(w, r, 0, &ep); err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	id := xname.Normalize(r.PathValue("xname"))
	if ep.ID != "" && xname.Normalize(ep.ID) != id {
		problem.Write(w, r, a.log, problem.Invalidf("ID: %q does not match the path xname %s", ep.ID, id))
		return
	}
	ep.ID = id
	// A GET-modify-PUT round trip carries no Password: "" means not supplied.
	var user, pass *string
	if ep.User != "" {
		user = &ep.User
	}
	if ep.Password != "" {
		pass = &ep.Password
	}
	row, err := a.newRFRow("", ep)
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	dropped := false
	stored, err := a.store.updateRFEndpoint(r.Context(), id, func(old *rfRow) error {
		next := row
		next.ep.DiscoveryInfo = old.ep.DiscoveryInfo
		if pass == nil {
			stored, err := a.rf.openCred(*old)
			if err != nil {
				return err
			}
			var c rfCred
			c, dropped = carryCred(stored, old.ep, next.ep, user, pass)
			if next.cred, err = a.rf.sealCred(id, c); err != nil {
				return err
			}
		}
		*old = next
		return nil
	})
	if errors.Is(err, problem.ErrNotFound) {
		// The shipped HSM's PUT replaces; it does not create.
		err = problem.NotFoundf("No such entry: %s", id)
	}
	a.logDropped(r, id, dropped && err == nil)
	a.answerStored(w, r, stored, err)
}

// carryCred returns the credentials an update of a stored endpoint keeps:
// what the request supplied (user and pass, nil when absent) over the stored
// ones. Stored credentials are bound to the address they were given for:
// when the update moves the endpoint to another FQDN or IPAddress (Hostname
// and Domain count through the FQDN they make) and supplies no Password, the
// stored User and Password are dropped, so they are never sent to the new
// host (issue 18: a PATCH of FQDN alone sent the real BMC password to any
// host). dropped reports that stored credentials were discarded.
//
// Dropping rather than refusing the update with 400: HMS accepts such an
// Update, and REDS-like clients and scripts re-address BMCs with it; the
// loss is not silent (GET shows no User, the next walk records
// VerificationFailed, and it is logged), and it is fixed by sending the
// credentials again, whereas a 400 would break those clients outright.
func carryCred(stored rfCred, old, next hsm.RedfishEndpoint, user, pass *string) (c rfCred, dropped bool) {
	switch {
	case sameAddress(old, next):
		c = stored
	case pass != nil:
		c.User = stored.User // a new password for the same account
	default:
		dropped = stored != (rfCred{})
	}
	if user != nil {
		c.User = *user
	}
	if pass != nil {
		c.Password = *pass
	}
	return c, dropped
}

// sameAddress reports whether a and b (both normalised) name the same BMC
// address. Host names compare without case; any other difference counts.
func sameAddress(a, b hsm.RedfishEndpoint) bool {
	return strings.EqualFold(a.FQDN, b.FQDN) && a.IPAddress == b.IPAddress
}

// logDropped records, once per request, that an update moved endpoint id
// to a new address without credentials and its stored ones were dropped.
func (a *API) logDropped(r *http.Request, id string, dropped bool) {
	if dropped {
		a.log.InfoContext(r.Context(), "redfish_endpoint_credentials_dropped", "xname", id,
			"reason", "address changed without credentials")
	}
}

func (a *API) patchRFEndpoint(w http.ResponseWriter, r *http.Request) {
	var p hsm.RedfishEndpointPatch
	if err := httpserver.ReadJSON(w, r, 0, &p); err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	id := xname.Normalize(r.PathValue("xname"))
	dropped := false
	stored, err := a.store.updateRFEndpoint(r.Context(), id, func(row *rfRow) error {
		stored, err := a.rf.openCred(*row)
		if err != nil {
			return err
		}
		ep := row.ep
		// A new FQDN re-derives the Hostname (and the reverse), rather
		// than conflicting with the one derived from the old.
		if p.FQDN != nil && p.Hostname == nil {
			ep.Hostname = ""
		}
		if p.FQDN == nil && (p.Hostname != nil || p.Domain != nil) {
			ep.FQDN = ""
		}
		p.Apply(&ep)
		if err := normEndpoint("", &ep); err != nil {
			return err
		}
		var c rfCred
		c, dropped = carryCred(stored, row.ep, ep, p.User, p.Password)
		if row.cred, err = a.rf.sealCred(id, c); err != nil {
			return err
		}
		ep.User, ep.Password = "", ""
		row.ep = ep
		return nil
	})
	a.logDropped(r, id, dropped && err == nil)
	a.answerStored(w, r, stored, err)
}

// answerStored answers a PUT or PATCH of an endpoint: the endpoint as
// stored, after queueing its walk when it asks for discovery on update.
func (a *API) answerStored(w http.ResponseWriter, r *http.Request, stored rfRow, err error) {
	if err == nil && stored.ep.RediscoverOnUpdate {
		a.rf.registering()
		err = a.rf.Enqueue(r.Context(), []string{stored.ep.ID}, true)
	}
	if err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	httpserver.WriteJSON(w, http.StatusOK, a.public(stored))
}

func (a *API) deleteRFEndpoints(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("xname")
	if id != "" {
		id = xname.Normalize(id)
	}
	n, err := a.store.deleteRFEndpoints(r.Context(), id)
	switch {
	case err != nil:
		problem.Write(w, r, a.log, err)
	case id != "":
		core.WriteDeletedOne(w)
	default:
		core.WriteDeleted(w, n)
	}
}

// discoverBody is the body of POST /Inventory/Discover.
type discoverBody struct {
	XNames []string `json:"xnames"`
	Force  bool     `json:"force"`
}
