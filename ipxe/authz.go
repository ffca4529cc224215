package ipxe

import (
	"net/http"

	"github.com/hmsuite/hms/internal/auth"
)

// AuthTable is who may call each bss route when the suite checks tokens
// (-help-auth prints it). A node token may fetch its own boot script
// (?name=<its xname>) and its own cloud-init documents (the node whose
// address the request comes from must be the token's sub). iPXE firmware
// and cloud-init's datasource send no token of their own: with enforcement
// on, nodes boot only where the site's boot chain adds one (or through an
// operator's proxy); roll out with -auth-shadow and read its log first.
// The rows without a method only answer 405 and are open.
func AuthTable() auth.Table {
	return authTable(func(*http.Request) (string, bool) { return "", false })
}

// authTable is AuthTable with caller resolving the xname of the node a
// cloud-init request comes from.
func authTable(caller auth.XnameFunc) auth.Table {
	const bp = Base + "/bootparameters"
	open := auth.Open()
	cloud := auth.Write().OrNode(caller, "caller address")
	return auth.Table{Daemon: "bss", Routes: []auth.Route{
		{Pattern: "GET " + Base + "/openapi.yaml", Access: open},
		{Pattern: Base + "/openapi.yaml", Access: open},
		{Pattern: "GET " + bp, Access: auth.Read()},
		{Pattern: "POST " + bp, Access: auth.Write()},
		{Pattern: "PUT " + bp, Access: auth.Write()},
		{Pattern: "PATCH " + bp, Access: auth.Write()},
		{Pattern: "DELETE " + bp, Access: auth.Write()},
		{Pattern: bp, Access: open},
		{Pattern: "GET " + Base + "/bootscript", Access: auth.Read().OrNode(nodeScriptName, "query name, without mac or nid")},
		{Pattern: Base + "/bootscript", Access: open},
		{Pattern: "GET " + Base + "/hosts", Access: auth.Read()},
		{Pattern: "POST " + Base + "/hosts", Access: auth.Read()},
		{Pattern: Base + "/hosts", Access: open},
		{Pattern: "GET " + Base + "/dumpstate", Access: auth.AdminOnly()},
		{Pattern: Base + "/dumpstate", Access: open},
		{Pattern: "GET " + Base + "/endpoint-history", Access: auth.Read()},
		{Pattern: Base + "/endpoint-history", Access: open},
		{Pattern: "GET " + Base + "/dhcp/leases", Access: auth.Read()},
		{Pattern: Base + "/dhcp/leases", Access: open},
		{Pattern: "POST " + Base + "/scn", Access: auth.AdminOnly()},
		{Pattern: Base + "/scn", Access: open},
		{Pattern: "GET " + Base + "/service/", Access: open},
		{Pattern: Base + "/service/", Access: open},
		{Pattern: "GET /meta-data", Access: cloud},
		{Pattern: "/meta-data", Access: open},
		{Pattern: "GET /user-data", Access: cloud},
		{Pattern: "/user-data", Access: open},
		{Pattern: "POST /phone-home", Access: cloud},
		{Pattern: "/phone-home", Access: open},
		// The catch-all (bss's 404 for unknown paths) is admin-only, so a
		// route added later without a row is never open by accident.
		{Pattern: Base + "/", Access: auth.AdminOnly()},
	}}
}

// nodeScriptName is the xname a node token's boot script request is for:
// its name=, and only when it names no mac= or nid=, which the lookup falls
// back to when no entry is stored under the name (another node's entry).
func nodeScriptName(r *http.Request) (string, bool) {
	q := r.URL.Query()
	if q.Has("mac") || q.Has("nid") {
		return "", false
	}
	return auth.QueryXname("name")(r)
}

// callerXname is the xname of the node a request comes from, as cloud-init
// routes find it.
func (s *Service) callerXname(r *http.Request) (string, bool) {
	n := s.caller(r.Context(), r)
	if n == nil {
		return "", false
	}
	return n.ID, true
}
