package statemgr

import "net/http"

// lockRoutes registers /locks/*.
func (a *API) lockRoutes(mux *http.ServeMux) {}
