package statemgr

import (
	"log/slog"
	"net/http"
)

// Base is the path prefix of the HSM v2 API.
const Base = "/hsm/v2"

// API serves the HSM v2 REST API over a Store.
type API struct {
	store *Store
	log   *slog.Logger
}

// NewAPI returns the API for store.
func NewAPI(store *Store, log *slog.Logger) *API {
	return &API{store: store, log: log}
}

// Handler returns the routed API.
func (a *API) Handler() http.Handler {
	mux := http.NewServeMux()
	a.routes(mux)
	return mux
}

// routes registers every route, one line each; each concern registers its own.
func (a *API) routes(mux *http.ServeMux) {
	a.groupRoutes(mux)
	a.lockRoutes(mux)
}
