package statemgr

import (
	"embed"
	"log/slog"
	"net/http"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/statemgr/component"
	"github.com/hmsuite/hms/statemgr/ethernet"
	"github.com/hmsuite/hms/statemgr/group"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
	"github.com/hmsuite/hms/statemgr/inventory"
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
	rf    *inventory.Discovery // nil: no Redfish routes
}

// NewAPI returns the API for store. With disc it also serves
// RedfishEndpoints, discovery and the Redfish inventory (ComponentEndpoints,
// ServiceEndpoints, Hardware); without (nil) those routes answer 404.
func NewAPI(store *Store, log *slog.Logger, disc *inventory.Discovery) *API {
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
	component.NewAPI(component.NewStore(a.store.Store), a.log).Routes(mux)
	ethernet.NewAPI(ethernet.NewStore(a.store.DB, a.store.Now), a.log).Routes(mux)
	scn.NewAPI(scn.NewStore(a.store.Store), a.log).Routes(mux)
	group.NewAPI(group.NewStore(a.store.Store), a.log).Routes(mux)
	lock.NewAPI(lock.NewStore(a.store.Store), a.log).Routes(mux)
	if a.rf != nil {
		inventory.NewAPI(a.rf, a.log).Routes(mux)
	}
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
