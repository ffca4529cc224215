package statemgr

import (
	"log/slog"
	"testing"

	"github.com/hmsuite/hms/internal/httpserver/routetest"
)

// TestOpenAPIDocument: the served document lists every route of a daemon
// with discovery (all of HSM's routes) and no other.
func TestOpenAPIDocument(t *testing.T) {
	e := newRFEnv(t, DiscoveryConfig{})
	code, doc := e.do("GET", "/openapi.yaml", nil)
	if code != 200 {
		t.Fatalf("GET %s/openapi.yaml: %d", Base, code)
	}
	api := NewAPI(e.store, slog.New(slog.DiscardHandler))
	api.SetDiscovery(e.disc)
	routetest.Check(t, api.Handler(), doc)
}
