package ipxe

import (
	"github.com/hmsuite/hms/internal/auth"
)

// AuthTable is who may call each bss route when the suite checks tokens
// (-help-auth prints it). The boot script and the cloud-init routes are
// open in every mode, as hms-bss leaves them: iPXE firmware and
// cloud-init's datasource cannot send a token, and a node has none before
// its boot script gives it one (-node-token-key). As before, the address a
// request comes from decides whose cloud-init data it gets, and a node
// token is handed only to a node asking from one of its own addresses
// (docs/security.md). A node token may renew itself (GET node-token
// ?name=<its xname>). The rows without a method only answer 405 and are
// open.
func AuthTable() auth.Table {
	const bp = Base + "/bootparameters"
	open := auth.Open()
	return auth.Table{Daemon: "bss", Routes: []auth.Route{
		{Pattern: "GET " + Base + "/openapi.yaml", Access: open},
		{Pattern: Base + "/openapi.yaml", Access: open},
		{Pattern: "GET " + bp, Access: auth.Read()},
		{Pattern: "POST " + bp, Access: auth.Write()},
		{Pattern: "PUT " + bp, Access: auth.Write()},
		{Pattern: "PATCH " + bp, Access: auth.Write()},
		{Pattern: "DELETE " + bp, Access: auth.Write()},
		{Pattern: bp, Access: open},
		{Pattern: "GET " + Base + "/bootscript", Access: open},
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
		{Pattern: "POST " + Base + "/scn", Access: auth.SCNIntake()},
		{Pattern: Base + "/scn", Access: open},
		{Pattern: "GET " + Base + "/node-token", Access: auth.AdminOnly().OrNode(auth.QueryXname("name"), "query name")},
		{Pattern: Base + "/node-token", Access: open},
		{Pattern: "GET " + Base + "/node-jwks", Access: open},
		{Pattern: Base + "/node-jwks", Access: open},
		{Pattern: "GET " + Base + "/service/", Access: open},
		{Pattern: Base + "/service/", Access: open},
		{Pattern: "GET /meta-data", Access: open},
		{Pattern: "/meta-data", Access: open},
		{Pattern: "GET /user-data", Access: open},
		{Pattern: "/user-data", Access: open},
		{Pattern: "POST /phone-home", Access: open},
		{Pattern: "/phone-home", Access: open},
		// The catch-all (bss's 404 for unknown paths) is admin-only, so a
		// route added later without a row is never open by accident.
		{Pattern: Base + "/", Access: auth.AdminOnly()},
	}}
}
