package statemgr

import "net/http"

// groupRoutes registers /groups, /partitions and /memberships.
func (a *API) groupRoutes(mux *http.ServeMux) {}
