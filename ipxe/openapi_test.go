package ipxe

import (
	"testing"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/httpserver/routetest"
)

// TestOpenAPIDocument: the served document lists every route and no other.
func TestOpenAPIDocument(t *testing.T) {
	h := newHarness(t)
	code, _, doc := h.do(t, "GET", Base+"/openapi.yaml", "")
	if code != 200 {
		t.Fatalf("GET %s/openapi.yaml: %d", Base, code)
	}
	routetest.Check(t, NewAPI(h.svc, nil, nil, Version).Handler().(*httpserver.Mux), []byte(doc))
}
