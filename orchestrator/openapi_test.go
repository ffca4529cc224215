package orchestrator

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/httpserver/routetest"
)

// TestOpenAPIDocument: the served document lists every route and no other.
func TestOpenAPIDocument(t *testing.T) {
	e := newEnv(t)
	resp, err := http.Get(e.url + Base + "/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	doc, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !bytes.Equal(doc, apiDoc) {
		t.Fatalf("GET %s/openapi.yaml: %d, %d bytes", Base, resp.StatusCode, len(doc))
	}
	routetest.Check(t, NewAPI(e.daemon.svc, nil).Handler().(*httpserver.Mux), doc)
}
