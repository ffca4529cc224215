package statemgr

import (
	"embed"
	"log/slog"
	"net/http"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/statemgr/ethernet"
	"github.com/hmsuite/hms/statemgr/group"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
	"github.com/hmsuite/hms/statemgr/lock"
	"github.com/hmsuite/hms/statemgr/scn"
)

// Base is the path prefix of the HSM v2 API.
const Base = hsm.Base

// apiDoc holds openapi.yaml, the document of this API, served at
// /hsm/v2/openapi.yaml. Its paths are checked against the routes by
// TestOpenAPIDocument: a new route goes into both.
//
//go:embed openapi.yaml
var apiDoc embed.FS

// API serves the HSM v2 REST API over a Store.
type API struct {
	store *Store
	log   *slog.Logger
	rf    *Discovery // nil: no Redfish routes
}

// NewAPI returns the API for store. With disc it also serves
// RedfishEndpoints, discovery and the Redfish inventory (ComponentEndpoints,
// ServiceEndpoints, Hardware); without (nil) those routes answer 404.
func NewAPI(store *Store, log *slog.Logger, disc *Discovery) *API {
	return &API{store: store, log: log, rf: disc}
}

// Handler returns the routed API.
func (a *API) Handler() *httpserver.Mux {
	mux := httpserver.NewMux(problem.Style{NoInstance: true})
	a.routes(mux)
	return mux
}

// routes registers every route, one line each; each concern registers its own.
func (a *API) routes(mux *httpserver.Mux) {
	a.serviceRoutes(mux)
	a.componentRoutes(mux)
	a.defaultsRoutes(mux)
	ethernet.NewAPI(a.store.eth, a.log).Routes(mux)
	scn.NewAPI(scn.NewStore(a.store.Store), a.log).Routes(mux)
	group.NewAPI(group.NewStore(a.store.Store), a.log).Routes(mux)
	lock.NewAPI(lock.NewStore(a.store.Store), a.log).Routes(mux)
	a.redfishRoutes(mux)
}

// serviceRoutes registers /service/*.
func (a *API) serviceRoutes(mux *httpserver.Mux) {
	mux.HandleFunc("GET "+Base+"/openapi.yaml", httpserver.OpenAPI(apiDoc, "openapi.yaml"))
	mux.HandleFunc("GET "+Base+"/service/ready", a.ready)
	mux.HandleFunc("GET "+Base+"/service/liveness", httpserver.NoContent)
	mux.HandleFunc("GET "+Base+"/service/values", a.getValues)
	mux.HandleFunc("GET "+Base+"/service/values/{kind}", a.getValues)
}

// ready is HSM's readiness probe. Unlike the other daemons' (204), the HSM
// API answers 200 with its {"code","message"} body; 503 problem+json when
// the database does not answer.
func (a *API) ready(w http.ResponseWriter, r *http.Request) {
	if err := a.store.Ping(r.Context()); err != nil {
		problem.Write(w, r, a.log, problem.Unavailablef("database: %v", err))
		return
	}
	core.WriteMessage(w, "HSM is healthy")
}

// componentRoutes registers /State/Components/*.
func (a *API) componentRoutes(mux *httpserver.Mux) {
	c := Base + "/State/Components"
	mux.HandleFunc("GET "+c, a.listComponents)
	mux.HandleFunc("POST "+c, a.postComponents)
	mux.HandleFunc("DELETE "+c, a.deleteComponents)
	mux.HandleFunc("GET "+c+"/{xname}", a.getComponent)
	mux.HandleFunc("PUT "+c+"/{xname}", a.putComponent)
	mux.HandleFunc("DELETE "+c+"/{xname}", a.deleteComponent)
	mux.HandleFunc("GET "+c+"/ByNID/{nid}", a.getComponentByNID)
	mux.HandleFunc("POST "+c+"/Query", a.queryComponents)
	mux.HandleFunc("POST "+c+"/ByNID/Query", a.queryByNID)
	mux.HandleFunc("GET "+c+"/Query/{xname}", a.queryUnder)
	mux.HandleFunc("PATCH "+c+"/BulkStateData", a.patchState(true))
	mux.HandleFunc("PATCH "+c+"/{xname}/StateData", a.patchState(false))
	mux.HandleFunc("PATCH "+c+"/BulkFlagOnly", a.patchFlag(true))
	mux.HandleFunc("PATCH "+c+"/{xname}/FlagOnly", a.patchFlag(false))
	mux.HandleFunc("PATCH "+c+"/BulkEnabled", a.patchEnabled(true))
	mux.HandleFunc("PATCH "+c+"/{xname}/Enabled", a.patchEnabled(false))
	mux.HandleFunc("PATCH "+c+"/BulkSoftwareStatus", a.patchSoftwareStatus(true))
	mux.HandleFunc("PATCH "+c+"/{xname}/SoftwareStatus", a.patchSoftwareStatus(false))
	mux.HandleFunc("PATCH "+c+"/BulkRole", a.patchRole(true))
	mux.HandleFunc("PATCH "+c+"/{xname}/Role", a.patchRole(false))
	mux.HandleFunc("PATCH "+c+"/BulkNID", a.patchNIDs)
	mux.HandleFunc("PATCH "+c+"/{xname}/NID", a.patchNID)
}

// defaultsRoutes registers /Defaults/NodeMaps.
func (a *API) defaultsRoutes(mux *httpserver.Mux) {
	mux.HandleFunc("GET "+Base+"/Defaults/NodeMaps", a.getNodeMaps)
	mux.HandleFunc("POST "+Base+"/Defaults/NodeMaps", a.postNodeMaps)
	mux.HandleFunc("DELETE "+Base+"/Defaults/NodeMaps", a.deleteNodeMaps)
	mux.HandleFunc("GET "+Base+"/Defaults/NodeMaps/{xname}", a.getNodeMap)
	mux.HandleFunc("PUT "+Base+"/Defaults/NodeMaps/{xname}", a.putNodeMap)
	mux.HandleFunc("DELETE "+Base+"/Defaults/NodeMaps/{xname}", a.deleteNodeMaps)
}
