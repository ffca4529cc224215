package heartbeat

import (
	"github.com/hmsuite/hms/heartbeat/agent"
	"github.com/hmsuite/hms/internal/auth"
)

// AuthTable is who may call each hbtd route when the suite checks tokens
// (-help-auth prints it). A node token may heartbeat for its own xname only
// (the body's Component, or the path's); PATCH /params is admin-only, since
// it can switch hbtd's reports to HSM off.
func AuthTable() auth.Table {
	b := agent.BasePath
	self := auth.PathXname("xname")
	return auth.Table{Daemon: "hbtd", Routes: []auth.Route{
		{Pattern: "GET " + b + "/openapi.yaml", Access: auth.Open()},
		{Pattern: "POST " + b + "/heartbeat", Access: auth.Write().OrNode(auth.BodyXname("Component", nil), "body Component")},
		{Pattern: "POST " + b + "/heartbeat/{xname}", Access: auth.Write().OrNode(self, "path")},
		{Pattern: "POST " + b + "/heartbeats", Access: auth.Write()},
		{Pattern: "POST " + b + "/hbstates", Access: auth.Read()},
		{Pattern: "GET " + b + "/hbstate/{xname}", Access: auth.Read().OrNode(self, "path")},
		{Pattern: "GET " + b + "/params", Access: auth.Read()},
		{Pattern: "PATCH " + b + "/params", Access: auth.AdminOnly()},
		{Pattern: "GET " + b + "/health", Access: auth.Open()},
		{Pattern: "GET " + b + "/liveness", Access: auth.Open()},
		{Pattern: "GET " + b + "/readiness", Access: auth.Open()},
		// HSM posts SCNs with its scn token (or the suite's admin one).
		{Pattern: "POST " + SCNPath, Access: auth.SCNIntake()},
	}}
}
