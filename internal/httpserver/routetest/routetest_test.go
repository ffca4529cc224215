package routetest

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
)

func TestDiff(t *testing.T) {
	mux := httpserver.NewMux(problem.Style{})
	nop := func(http.ResponseWriter, *http.Request) {}
	mux.HandleFunc("GET /v1/hardware/{xname}", nop)
	mux.HandleFunc("DELETE /v1/hardware/{xname}", nop)
	mux.HandleFunc("GET /hmi/{ver}/params", nop)
	mux.HandleFunc("/hmi/{ver}/params", nop) // other methods: covered by the GET
	mux.HandleFunc("/v1/other/", nop)
	doc := `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /v1/hardware/{xname}:
    get:
      summary: "one: object"
    put: {summary: not routed}
  "/hmi/v2/params":
    get: {summary: params}
components:
  schemas:
    X: {type: object}
`
	want := []string{
		"documented PUT /v1/hardware/{xname} reaches no route",
		`route "DELETE /v1/hardware/{xname}" is not in the OpenAPI document`,
		`route "/v1/other/" is not in the OpenAPI document`,
	}
	if d := cmp.Diff(want, Diff(mux, []byte(doc))); d != "" {
		t.Fatalf("Diff (-want +got):\n%s", d)
	}
	if got := Diff(mux, []byte("openapi: 3.0.3\n")); len(got) != 1 {
		t.Fatalf("a document without paths: %v", got)
	}
}
