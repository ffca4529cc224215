package power

import (
	"testing"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/httpserver/routetest"
)

// TestOpenAPIDocument: the served document lists every route and no other.
func TestOpenAPIDocument(t *testing.T) {
	e := newEnv(t, 1, nil)
	code, doc := e.call("GET", "/v1/openapi.yaml", nil)
	if code != 200 {
		t.Fatalf("GET /v1/openapi.yaml: %d", code)
	}
	routetest.Check(t, NewAPI(e.daemon.Service(), nil).Handler().(*httpserver.Mux), doc)
}
