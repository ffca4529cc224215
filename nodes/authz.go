package nodes

import "github.com/hmsuite/hms/internal/auth"

// AuthTable is who may call each nodes route when the suite checks tokens
// (-help-auth prints it): operators apply and edit, viewers read; the
// probes are open.
func AuthTable() auth.Table {
	var routes []auth.Route
	add := func(pattern string, a auth.Access) { routes = append(routes, auth.Route{Pattern: pattern, Access: a}) }
	add("GET "+Base+"/liveness", auth.Open())
	add("GET "+Base+"/readiness", auth.Open())
	add("POST "+Base+"/apply", auth.Write())
	for _, c := range collections {
		add("GET "+Base+c.path, auth.Read())
		add("GET "+Base+c.path+"/{name}", auth.Read())
		add("PUT "+Base+c.path+"/{name}", auth.Write())
		add("DELETE "+Base+c.path+"/{name}", auth.Write())
	}
	return auth.Table{Daemon: "nodes", Routes: routes}
}
