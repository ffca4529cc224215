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
	api := NewAPI(e.store, slog.New(slog.DiscardHandler), e.disc)
	routetest.Check(t, api.Handler(), doc)
}

// TestListingEndsWithNewline: the hand-rendered component listing ends
// with a newline like every json.Encoder answer of the shipped HSM.
func TestListingEndsWithNewline(t *testing.T) {
	a := newAPIServer(t)
	for _, path := range []string{"/State/Components", "/State/Components?type=Node"} {
		if out := a.must(200, "GET", path, nil); len(out) == 0 || out[len(out)-1] != '\n' {
			t.Errorf("GET %s: %q does not end with a newline", path, out)
		}
	}
}
