package power

import "github.com/hmsuite/hms/internal/auth"

// AuthTable is who may call each pcs route when the suite checks tokens
// (-help-auth prints it): power transitions and capping are operators';
// status reads (also the POST forms that only query) viewers'.
func AuthTable() auth.Table {
	var routes []auth.Route
	add := func(pattern string, a auth.Access) { routes = append(routes, auth.Route{Pattern: pattern, Access: a}) }
	for _, p := range []string{"", Base} {
		add("GET "+p+"/{$}", auth.Open())
		add("GET "+p+"/transitions", auth.Read())
		add("POST "+p+"/transitions", auth.Write())
		add("GET "+p+"/transitions/{id}", auth.Read())
		add("DELETE "+p+"/transitions/{id}", auth.Write())
		add("GET "+p+"/power-status", auth.Read())
		add("POST "+p+"/power-status", auth.Read())
		add("POST "+p+"/power-cap/snapshot", auth.Write())
		add("PATCH "+p+"/power-cap", auth.Write())
		add("GET "+p+"/power-cap", auth.Read())
		add("GET "+p+"/power-cap/{id}", auth.Read())
		add("GET "+p+"/liveness", auth.Open())
		add("GET "+p+"/readiness", auth.Open())
		add("GET "+p+"/health", auth.Open())
		add("GET "+p+"/openapi.yaml", auth.Open())
	}
	add("POST "+CAPMCBase+"/xname_on", auth.Write())
	add("POST "+CAPMCBase+"/xname_off", auth.Write())
	add("POST "+CAPMCBase+"/xname_reinit", auth.Write())
	add("POST "+CAPMCBase+"/get_xname_status", auth.Read())
	add("POST "+CAPMCBase+"/get_power_cap", auth.Read())
	add("POST "+CAPMCBase+"/get_power_cap_capabilities", auth.Read())
	add("POST "+CAPMCBase+"/set_power_cap", auth.Write())
	add("GET "+CAPMCBase+"/health", auth.Open())
	add("GET "+CAPMCBase+"/liveness", auth.Open())
	add("GET "+CAPMCBase+"/readiness", auth.Open())
	return auth.Table{Daemon: "pcs", Routes: routes}
}
