package discovery

import "github.com/hmsuite/hms/internal/auth"

// AuthTable is who may call each reds route when the suite checks tokens
// (-help-auth prints it). POST /credentials and PUT /discovery are the
// discovery image's: they keep their own check of the discovery token
// (-discovery-token-file) that BSS hands the image, which is no JWT, so
// the guard leaves them to it.
func AuthTable() auth.Table {
	return auth.Table{Daemon: "reds", Routes: []auth.Route{
		{Pattern: "GET " + Base + "/openapi.yaml", Access: auth.Open()},
		{Pattern: "GET " + Base + "/liveness", Access: auth.Open()},
		{Pattern: "GET " + Base + "/readiness", Access: auth.Open()},
		{Pattern: "GET " + Base + "/unknown", Access: auth.Read()},
		{Pattern: "GET " + Base + "/endpoints", Access: auth.Read()},
		{Pattern: "POST " + Base + "/credentials", Access: auth.Open()},
		{Pattern: "PUT " + Base + "/discovery", Access: auth.Open()},
	}}
}
