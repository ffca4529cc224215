package statemgr_test

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hmsuite/hms/internal/httpserver/routetest"
	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/statemgr"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/core"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
	"github.com/hmsuite/hms/statemgr/inventory"
)

// TestOpenAPIDocument: the served document lists every route of a daemon
// with discovery (all of HSM's routes) and no other.
func TestOpenAPIDocument(t *testing.T) { pg.EachDB(t, testOpenAPIDocument) }

func testOpenAPIDocument(t *testing.T, db testpeer.DB) {
	c, _ := hsmtest.NewStoreOn(t, db, core.Config{})
	creds, err := inventory.NewCreds(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	d := inventory.NewDiscovery(inventory.NewStore(c), creds, inventory.DiscoveryConfig{})
	api := statemgr.NewAPI(&statemgr.Store{Store: c}, slog.New(slog.DiscardHandler), d)
	a := hsmtest.ServeHandler(t, c, api.Handler())
	code, doc := a.Do("GET", "/openapi.yaml", nil)
	if code != 200 {
		t.Fatalf("GET %s/openapi.yaml: %d", statemgr.Base, code)
	}
	routetest.Check(t, api.Handler(), doc)
}

// TestListingEndsWithNewline: the hand-rendered component listing ends
// with a newline like every json.Encoder answer of the shipped HSM.
func TestListingEndsWithNewline(t *testing.T) { pg.EachDB(t, testListingEndsWithNewline) }

func testListingEndsWithNewline(t *testing.T, db testpeer.DB) {
	a := newServerOn(t, db, core.Config{})
	for _, path := range []string{"/State/Components", "/State/Components?type=Node"} {
		if out := a.Must(200, "GET", path, nil); len(out) == 0 || out[len(out)-1] != '\n' {
			t.Errorf("GET %s: %q does not end with a newline", path, out)
		}
	}
}

func TestServiceEndpoints(t *testing.T) { pg.EachDB(t, testServiceEndpoints) }

func testServiceEndpoints(t *testing.T, db testpeer.DB) {
	a := newServerOn(t, db, core.Config{})
	if got := a.Must(200, "GET", "/service/ready", nil); !strings.Contains(string(got), `{"code":0,"message":"HSM is healthy"}`) {
		t.Errorf("/service/ready body %s, want the HSM {code, message} body", got)
	}
	a.Must(204, "GET", "/service/liveness", nil)
	var v hsm.Values
	json.Unmarshal(a.Must(200, "GET", "/service/values/flag", nil), &v)
	if diff := cmp.Diff(hsm.Values{Flag: []string{"Unknown", "OK", "Warning", "Alert", "Locked"}}, v); diff != "" {
		t.Errorf("values/flag (-want +got):\n%s", diff)
	}
	v = hsm.Values{}
	json.Unmarshal(a.Must(200, "GET", "/service/values", nil), &v)
	if len(v.State) != 8 || len(v.Type) < 40 || len(v.Role) == 0 || len(v.Arch) != 4 {
		t.Errorf("values: %+v", v)
	}
	a.Must(404, "GET", "/service/values/colour", nil)
}

// TestNoDiscoveryNoInventoryRoutes: an API built without a Discovery does
// not serve RedfishEndpoints, discovery nor the Redfish inventory.
func TestNoDiscoveryNoInventoryRoutes(t *testing.T) { pg.EachDB(t, testNoDiscoveryNoInventoryRoutes) }

func testNoDiscoveryNoInventoryRoutes(t *testing.T, db testpeer.DB) {
	a := newServerOn(t, db, core.Config{})
	for _, path := range []string{"/Inventory/RedfishEndpoints", "/Inventory/DiscoveryStatus", "/Inventory/ComponentEndpoints", "/Inventory/Hardware"} {
		a.Must(404, "GET", path, nil)
	}
}
