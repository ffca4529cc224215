package client_test

import (
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/statemgr"
	"github.com/hmsuite/hms/statemgr/client"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/inventory"
)

func ptr[T any](v T) *T { return &v }

// newHSM runs a real HSM (with its Redfish endpoint routes, no discovery
// workers) on a loopback httptest server.
func newHSM(t *testing.T) *client.Client {
	t.Helper()
	srv := httptest.NewServer(hsmAPI(t))
	t.Cleanup(srv.Close)
	return client.New(srv.URL+"/hsm/v2/", srv.Client(), "tester")
}

// hsmAPI returns the handler of a real HSM over a new database.
func hsmAPI(t *testing.T) http.Handler {
	t.Helper()
	s, err := statemgr.OpenStore(t.Context(), filepath.Join(t.TempDir(), "hsm.db"), statemgr.StoreConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	creds, err := inventory.LoadCredKey(filepath.Join(t.TempDir(), "cred.key"))
	if err != nil {
		t.Fatal(err)
	}
	api := statemgr.NewAPI(s, slog.New(slog.DiscardHandler), inventory.NewDiscovery(inventory.NewStore(s.Store), creds, inventory.DiscoveryConfig{}))
	return api.Handler()
}

func TestComponents(t *testing.T) {
	c := newHSM(t)
	ctx := t.Context()
	if err := c.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.PostComponents(ctx, []hsm.Component{{ID: "x0c0s0b0n0", State: "Off", NID: ptr(1)}, {ID: "x0c0s0b0n1", State: "On"}}, false); err != nil {
		t.Fatal(err)
	}
	if err := c.BulkStateData(ctx, []string{"x0c0s0b0n0", "x0c0s0b0n1"}, "Ready", "", false, &hsm.ExtendedInfo{Message: "hb"}); err != nil {
		t.Fatal(err)
	}
	if err := c.StateData(ctx, "x0c0s0b0n1", "Ready", "Warning", false); err != nil {
		t.Fatal(err)
	}
	if err := c.BulkRole(ctx, []string{"x0c0s0b0n0"}, "Service", ""); err != nil {
		t.Fatal(err)
	}
	if err := c.BulkEnabled(ctx, []string{"x0c0s0b0n1"}, false); err != nil {
		t.Fatal(err)
	}
	if err := c.BulkSoftwareStatus(ctx, []string{"x0c0s0b0n1"}, "AdminDown"); err != nil {
		t.Fatal(err)
	}
	got, err := c.Components(ctx, url.Values{"type": {"Node"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []hsm.Component{
		{ID: "x0c0s0b0n0", Type: "Node", State: "Ready", Flag: "OK", Enabled: ptr(true), Role: "Service", NID: ptr(1)},
		{ID: "x0c0s0b0n1", Type: "Node", State: "Ready", Flag: "Warning", Enabled: ptr(false), SoftwareStatus: "AdminDown"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Components (-want +got):\n%s", diff)
	}
	queried, err := c.QueryComponents(ctx, []string{"x0c0s0b0n1"})
	if err != nil || len(queried) != 1 || queried[0].ID != "x0c0s0b0n1" {
		t.Errorf("QueryComponents = %+v, %v", queried, err)
	}
	under, err := c.ComponentsUnder(ctx, "x0c0s0b0", url.Values{"state": {"Ready"}})
	if err != nil || len(under) != 2 || under[0].ID != "x0c0s0b0n0" || under[1].ID != "x0c0s0b0n1" {
		t.Errorf("ComponentsUnder(x0c0s0b0) = %+v, %v; want its two nodes", under, err)
	}
	if under, err := c.ComponentsUnder(ctx, "x0c0s1", nil); err != nil || len(under) != 0 {
		t.Errorf("ComponentsUnder(x0c0s1) = %+v, %v; want none", under, err)
	}
	if _, err := c.Component(ctx, "x9c0s0b0n0"); !errors.Is(err, problem.ErrNotFound) {
		t.Errorf("missing component: %v, want ErrNotFound", err)
	}
	if err := c.BulkFlagOnly(ctx, []string{"x0c0s0b0n0"}, "Purple"); !errors.Is(err, problem.ErrInvalid) {
		t.Errorf("bad flag: %v, want ErrInvalid", err)
	}
}

func TestEthernetInterfaces(t *testing.T) {
	c := newHSM(t)
	ctx := t.Context()
	if err := c.PostComponents(ctx, []hsm.Component{{ID: "x0c0s0b0n0", State: "On"}}, false); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateEthernetInterface(ctx, hsm.EthernetInterface{MACAddress: "00:11:22:33:44:55"}); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateEthernetInterface(ctx, hsm.EthernetInterface{MACAddress: "00:11:22:33:44:55"}); !errors.Is(err, problem.ErrConflict) {
		t.Errorf("duplicate MAC: %v, want ErrConflict", err)
	}
	ei, err := c.PatchEthernetInterface(ctx, "001122334455", hsm.EthernetPatch{ComponentID: ptr("x0c0s0b0n0")})
	if err != nil || ei.Type != "Node" {
		t.Fatalf("patch: %+v %v", ei, err)
	}
	eis, err := c.EthernetInterfaces(ctx, url.Values{"ComponentID": {"x0c0s0b0n0"}})
	if err != nil || len(eis) != 1 {
		t.Fatalf("list: %+v %v", eis, err)
	}
	if one, err := c.EthernetInterface(ctx, "00:11:22:33:44:55"); err != nil || one.ID != "001122334455" {
		t.Fatalf("get: %+v %v", one, err)
	}
	if err := c.DeleteEthernetInterface(ctx, "001122334455"); err != nil {
		t.Fatal(err)
	}
}

func TestRedfishEndpoints(t *testing.T) {
	c := newHSM(t)
	ctx := t.Context()
	ep := hsm.RedfishEndpoint{ID: "x3000c0s1b0", FQDN: "127.0.0.1:1", User: "root", Password: "secret"}
	if err := c.CreateRedfishEndpoints(ctx, ep); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateRedfishEndpoints(ctx, ep); !errors.Is(err, problem.ErrConflict) {
		t.Errorf("duplicate endpoint: %v, want ErrConflict", err)
	}
	got, err := c.PatchRedfishEndpoint(ctx, "x3000c0s1b0", hsm.RedfishEndpointPatch{User: ptr("admin")})
	if err != nil || got.User != "admin" || got.Password != "" {
		t.Fatalf("patch: %+v %v", got, err)
	}
	one, err := c.RedfishEndpoint(ctx, "x3000c0s1b0")
	if err != nil || one.Type != "NodeBMC" || one.User != "admin" {
		t.Fatalf("get: %+v %v", one, err)
	}
	all, err := c.RedfishEndpoints(ctx, url.Values{"type": {"NodeBMC"}})
	if err != nil || len(all) != 1 {
		t.Fatalf("list: %+v %v", all, err)
	}
}

func TestSubscriptionsAndValues(t *testing.T) {
	c := newHSM(t)
	ctx := t.Context()
	vals, err := c.Values(ctx)
	if err != nil || len(vals.State) == 0 || len(vals.Role) == 0 {
		t.Fatalf("values: %+v %v", vals, err)
	}
	sub, err := c.Subscribe(ctx, hsm.Subscription{Subscriber: "x", Url: "http://127.0.0.1:1/scn", States: []string{"Ready"}})
	if err != nil || sub.ID == 0 {
		t.Fatalf("subscribe: %+v %v", sub, err)
	}
	if _, err := c.Subscribe(ctx, hsm.Subscription{Subscriber: "x", Url: "http://127.0.0.1:1/scn", States: []string{"On"}}); !errors.Is(err, problem.ErrConflict) {
		t.Errorf("second subscription: %v, want ErrConflict", err)
	}
	if err := c.PatchSubscription(ctx, sub.ID, hsm.SubscriptionPatch{Op: "replace", States: &[]string{"Off"}}); err != nil {
		t.Fatal(err)
	}
	subs, err := c.Subscriptions(ctx)
	if err != nil || len(subs) != 1 || subs[0].ID != sub.ID || !cmp.Equal(subs[0].States, []string{"Off"}) {
		t.Fatalf("list: %+v %v", subs, err)
	}
	if one, err := c.Subscription(ctx, sub.ID); err != nil || one.Subscriber != "x" {
		t.Fatalf("get: %+v %v", one, err)
	}
	if err := c.Unsubscribe(ctx, sub.ID); err != nil {
		t.Fatal(err)
	}
}

// TestNumericSubscriptionID: the shipped HSM numbers subscriptions, and so
// does the client.
func TestNumericSubscriptionID(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("User-Agent") != "tester" {
			http.Error(w, "no user agent", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"SubscriptionList":[{"ID":7,"Subscriber":"x","Url":"http://a/b"}]}`))
	}))
	defer srv.Close()
	subs, err := client.New(srv.URL, srv.Client(), "tester").Subscriptions(t.Context())
	if err != nil || len(subs) != 1 || subs[0].ID != 7 {
		t.Fatalf("Subscriptions = %+v, %v; want one with ID 7", subs, err)
	}
}
