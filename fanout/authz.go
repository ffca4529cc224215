package fanout

import (
	"strings"

	"github.com/hmsuite/hms/internal/auth"
)

// AuthTable is who may call each hmnfd route when the suite checks tokens
// (-help-auth prints it). A node token may manage only the subscriptions of
// its own xname (v1: the body's Subscriber, agent@xname; v2: the path).
// POST /scn takes the scn role (HSM's SCN token) or admin: it is how HSM
// delivers state changes, and anyone else posting there forges them.
// PATCH /params and deleting dead letters are admin-only.
func AuthTable() auth.Table {
	v1 := auth.Write().OrNode(auth.BodyXname("Subscriber", subscriberXname), "body Subscriber")
	v2 := auth.Write().OrNode(auth.PathXname("xname"), "path")
	return auth.Table{Daemon: "hmnfd", Routes: []auth.Route{
		{Pattern: "GET /hmi/{ver}/openapi.yaml", Access: auth.Open()},
		{Pattern: "POST /hmi/v1/subscribe", Access: v1},
		{Pattern: "PATCH /hmi/v1/subscribe", Access: v1},
		{Pattern: "DELETE /hmi/v1/subscribe", Access: v1},
		{Pattern: "GET /hmi/{ver}/subscriptions", Access: auth.Read()},
		{Pattern: "GET /hmi/v2/subscriptions/{xname}", Access: auth.Read().OrNode(auth.PathXname("xname"), "path")},
		{Pattern: "DELETE /hmi/v2/subscriptions/{xname}/agents", Access: v2},
		{Pattern: "POST /hmi/v2/subscriptions/{xname}/agents/{agent}", Access: v2},
		{Pattern: "PATCH /hmi/v2/subscriptions/{xname}/agents/{agent}", Access: v2},
		{Pattern: "DELETE /hmi/v2/subscriptions/{xname}/agents/{agent}", Access: v2},
		{Pattern: "POST /hmi/{ver}/scn", Access: auth.SCNIntake()},
		{Pattern: "GET /hmi/v2/deadletters", Access: auth.Read()},
		{Pattern: "DELETE /hmi/v2/deadletters", Access: auth.AdminOnly()},
		{Pattern: "DELETE /hmi/v2/deadletters/{id}", Access: auth.AdminOnly()},
		{Pattern: "GET /hmi/{ver}/params", Access: auth.Read()},
		{Pattern: "PATCH /hmi/{ver}/params", Access: auth.AdminOnly()},
		{Pattern: "GET /hmi/{ver}/health", Access: auth.Open()},
		{Pattern: "GET /hmi/{ver}/liveness", Access: auth.Open()},
		{Pattern: "GET /hmi/{ver}/readiness", Access: auth.Open()},
	}}
}

// subscriberXname is the xname of a v1 Subscriber (agent@xname, or xname).
func subscriberXname(s string) string {
	_, x, ok := strings.Cut(s, "@")
	if !ok {
		return s
	}
	return x
}
