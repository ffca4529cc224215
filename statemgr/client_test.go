package statemgr

import (
	"errors"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/statemgr/hsm"
)

func TestClient(t *testing.T) {
	a := newAPIServer(t)
	c := NewClient(a.srv.URL, a.srv.Client())
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
	got, err := c.Components(ctx, url.Values{"type": {"Node"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []hsm.Component{
		{ID: "x0c0s0b0n0", Type: "Node", State: "Ready", Flag: "OK", Enabled: ptr(true), Role: "Service", NID: ptr(1)},
		{ID: "x0c0s0b0n1", Type: "Node", State: "Ready", Flag: "Warning", Enabled: ptr(false)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Components (-want +got):\n%s", diff)
	}
	if _, err := c.Component(ctx, "x9c0s0b0n0"); !errors.Is(err, problem.ErrNotFound) {
		t.Errorf("missing component: %v, want ErrNotFound", err)
	}
	if err := c.BulkFlagOnly(ctx, []string{"x0c0s0b0n0"}, "Purple"); !errors.Is(err, problem.ErrInvalid) {
		t.Errorf("bad flag: %v, want ErrInvalid", err)
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
	if err := c.DeleteEthernetInterface(ctx, "001122334455"); err != nil {
		t.Fatal(err)
	}
	sub, err := c.Subscribe(ctx, hsm.Subscription{Subscriber: "x", Url: "http://127.0.0.1:1/scn", States: []string{"Ready"}})
	if err != nil || sub.ID == "" {
		t.Fatalf("subscribe: %+v %v", sub, err)
	}
	if err := c.Unsubscribe(ctx, sub.ID); err != nil {
		t.Fatal(err)
	}
}
