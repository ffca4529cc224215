package layout

import "github.com/hmsuite/hms/internal/auth"

// AuthTable is who may call each sls route when the suite checks tokens
// (-jwks-url or -jwt-key-file; -help-auth prints it). /dumpstate and
// /loadstate are admin-only: a dump carries the ExtraProperties secrets
// (switch SNMP and BMC passwords) and a load replaces the whole layout.
func AuthTable() auth.Table {
	return auth.Table{Daemon: "sls", Routes: []auth.Route{
		{Pattern: "GET " + Base + "/openapi.yaml", Access: auth.Open()},
		{Pattern: "GET " + Base + "/health", Access: auth.Open()},
		{Pattern: "GET " + Base + "/liveness", Access: auth.Open()},
		{Pattern: "GET " + Base + "/readiness", Access: auth.Open()},
		{Pattern: "GET " + Base + "/version", Access: auth.Read()},
		{Pattern: "GET " + Base + "/hardware", Access: auth.Read()},
		{Pattern: "POST " + Base + "/hardware", Access: auth.Write()},
		{Pattern: "GET " + Base + "/hardware/{xname}", Access: auth.Read()},
		{Pattern: "PUT " + Base + "/hardware/{xname}", Access: auth.Write()},
		{Pattern: "DELETE " + Base + "/hardware/{xname}", Access: auth.Write()},
		{Pattern: "PUT " + Base + "/bulk/hardware", Access: auth.Write()},
		{Pattern: "GET " + Base + "/search/hardware", Access: auth.Read()},
		{Pattern: "GET " + Base + "/networks", Access: auth.Read()},
		{Pattern: "POST " + Base + "/networks", Access: auth.Write()},
		{Pattern: "GET " + Base + "/networks/{network}", Access: auth.Read()},
		{Pattern: "PUT " + Base + "/networks/{network}", Access: auth.Write()},
		{Pattern: "PATCH " + Base + "/networks/{network}", Access: auth.Write()},
		{Pattern: "DELETE " + Base + "/networks/{network}", Access: auth.Write()},
		{Pattern: "GET " + Base + "/search/networks", Access: auth.Read()},
		{Pattern: "GET " + Base + "/dumpstate", Access: auth.AdminOnly()},
		{Pattern: "POST " + Base + "/loadstate", Access: auth.AdminOnly()},
	}}
}
