package orchestrator

import (
	"net/http"

	"github.com/hmsuite/hms/internal/auth"
)

// AuthTable is who may call each bos route when the suite checks tokens
// (-help-auth prints it): templates, sessions, components and options are
// operators' to change and viewers' to read; options, which steer every
// operator, admins'; a node may PATCH its own component (the actual-state
// reporter).
func AuthTable() auth.Table {
	var routes []auth.Route
	add := func(pattern string, a auth.Access) { routes = append(routes, auth.Route{Pattern: pattern, Access: a}) }
	add("GET /{$}", auth.Open())
	add("GET /v2", auth.Open())
	add("GET /v2/version", auth.Open())
	add("GET /v2/healthz", auth.Open())
	add("GET "+Base+"/openapi.yaml", auth.Open())
	for _, p := range []string{"/v2/sessiontemplates", "/v2/sessions", "/v2/components"} {
		add("GET "+p, auth.Read())
		add("GET "+p+"/{id}", auth.Read())
	}
	add("GET /v2/sessiontemplatesvalid/{id}", auth.Read())
	add("GET /v2/sessiontemplatetemplate", auth.Read())
	add("GET /v2/sessions/{id}/status", auth.Read())
	add("GET /v2/options", auth.Read())
	for _, w := range []string{"PUT /v2/sessiontemplates/{id}", "PATCH /v2/sessiontemplates/{id}",
		"DELETE /v2/sessiontemplates/{id}", "POST /v2/sessions", "DELETE /v2/sessions", "PATCH /v2/sessions/{id}",
		"DELETE /v2/sessions/{id}", "POST /v2/sessions/{id}/status", "PUT /v2/components", "PATCH /v2/components",
		"PUT /v2/components/{id}", "DELETE /v2/components/{id}", "POST /v2/applystaged"} {
		add(w, auth.Write())
	}
	add("PATCH /v2/options", auth.AdminOnly())
	// HSM posts SCNs with its scn token (or the suite's admin one), as to
	// BSS and hmnfd.
	add("POST "+SCNPath, auth.SCNIntake())
	add("PATCH /v2/components/{id}", auth.Write().OrNode(func(r *http.Request) (string, bool) {
		id := r.PathValue("id")
		return id, id != ""
	}, "path id"))
	return auth.Table{Daemon: "bos", Routes: routes}
}
