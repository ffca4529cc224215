package discovery

import "github.com/hmsuite/hms/internal/auth"

// AuthTable is who may call each reds route when the suite checks tokens
// (-help-auth prints it). POST /credentials and PUT /discovery are the
// discovery image's: they keep their own check of the discovery token
// (-discovery-token-file) that BSS hands the image, which is no JWT, so
// the guard leaves them to it (credentials.go: with that token alone,
// credentials only for a leased MAC not registered yet); with a valid JWT
// instead, an admin may call them for any MAC, a node token for the MACs
// of its own BMC only.
func AuthTable() auth.Table {
	nodeSide := auth.Optional("reds checks the discovery token, or a JWT: admin, or node (the MACs of its own BMC)")
	return auth.Table{Daemon: "reds", Routes: []auth.Route{
		{Pattern: "GET " + Base + "/openapi.yaml", Access: auth.Open()},
		{Pattern: "GET " + Base + "/liveness", Access: auth.Open()},
		{Pattern: "GET " + Base + "/readiness", Access: auth.Open()},
		{Pattern: "GET " + Base + "/unknown", Access: auth.Read()},
		{Pattern: "GET " + Base + "/endpoints", Access: auth.Read()},
		{Pattern: "DELETE " + Base + "/endpoints/{xname}/tls-key", Access: auth.AdminOnly()},
		{Pattern: "POST " + Base + "/credentials", Access: nodeSide},
		{Pattern: "PUT " + Base + "/discovery", Access: nodeSide},
	}}
}
