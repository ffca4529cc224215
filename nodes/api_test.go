package nodes_test

import (
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/httpclient"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/nodes"
	"github.com/hmsuite/hms/nodes/client"
	"github.com/hmsuite/hms/nodes/wire"
)

// newStoreOnly serves a nodes API without services (its store only) on a
// database of db.
func newStoreOnly(t *testing.T, db testpeer.DB) *client.Client {
	t.Helper()
	store, err := nodes.OpenStore(t.Context(), db(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	srv := httptest.NewServer(nodes.NewAPI(nodes.New(store, nodes.Config{}), nil).Handler())
	t.Cleanup(srv.Close)
	return client.New(srv.URL, srv.Client(), "test")
}

func node(x, mac string) wire.Resource {
	return wire.Resource{Kind: wire.KindComputeNode, ComputeNode: &wire.ComputeNode{Xname: x, BootMAC: mac, BootProfile: "compute"}}
}

func profile(kernel string) wire.Resource {
	return wire.Resource{Kind: wire.KindBootProfile, BootProfile: &wire.BootProfile{Name: "compute", KernelURL: kernel}}
}

func actions(p wire.Plan) map[string]string {
	out := map[string]string{}
	for _, c := range p.Changes {
		out[c.Kind+"/"+c.Name] = c.Action
	}
	return out
}

func TestApplyStoreOnly(t *testing.T) { pg.EachDB(t, testApplyStoreOnly) }

func testApplyStoreOnly(t *testing.T, db testpeer.DB) {
	c := newStoreOnly(t, db)
	ctx := t.Context()
	set := []wire.Resource{profile("http://k1"), node("x1000c0s0b0n0", "02:00:00:00:10:00"), node("x1000c0s1b0n0", "02:00:00:00:10:01")}
	steps := []struct {
		name string
		req  wire.ApplyRequest
		want map[string]string
	}{
		{name: "dry run", req: wire.ApplyRequest{Resources: set, DryRun: true}, want: map[string]string{
			"BootProfile/compute": "create", "ComputeNode/x1000c0s0b0n0": "create", "ComputeNode/x1000c0s1b0n0": "create"}},
		{name: "create", req: wire.ApplyRequest{Resources: set}, want: map[string]string{
			"BootProfile/compute": "create", "ComputeNode/x1000c0s0b0n0": "create", "ComputeNode/x1000c0s1b0n0": "create"}},
		{name: "re-apply", req: wire.ApplyRequest{Resources: set}, want: map[string]string{
			"BootProfile/compute": "unchanged", "ComputeNode/x1000c0s0b0n0": "unchanged", "ComputeNode/x1000c0s1b0n0": "unchanged"}},
		{name: "edit kernel", req: wire.ApplyRequest{Resources: []wire.Resource{profile("http://k2")}}, want: map[string]string{
			"BootProfile/compute": "update"}},
		{name: "prune", req: wire.ApplyRequest{Resources: set[:2], Prune: true}, want: map[string]string{
			"BootProfile/compute": "update", "ComputeNode/x1000c0s0b0n0": "unchanged", "ComputeNode/x1000c0s1b0n0": "delete"}},
		{name: "delete", req: wire.ApplyRequest{Resources: set[1:2], Delete: true}, want: map[string]string{
			"ComputeNode/x1000c0s0b0n0": "delete"}},
	}
	for _, s := range steps {
		plan, err := c.Apply(ctx, s.req)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if diff := cmp.Diff(s.want, actions(plan)); diff != "" {
			t.Errorf("%s: actions (-want +got):\n%s", s.name, diff)
		}
		if plan.Applied == s.req.DryRun {
			t.Errorf("%s: applied = %v", s.name, plan.Applied)
		}
	}
	nodes, err := c.ComputeNodes(ctx, client.Filter{})
	if err != nil || len(nodes) != 0 {
		t.Errorf("nodes left = %v, %v; want none", nodes, err)
	}
}

func TestApplyInvalid(t *testing.T) { pg.EachDB(t, testApplyInvalid) }

func testApplyInvalid(t *testing.T, db testpeer.DB) {
	c := newStoreOnly(t, db)
	tests := []struct {
		name string
		set  []wire.Resource
	}{
		{name: "duplicate xname", set: []wire.Resource{profile("k"), node("x1000c0s0b0n0", ""), node("x1000c0s0b0n0", "")}},
		{name: "MAC used twice", set: []wire.Resource{profile("k"), node("x1000c0s0b0n0", "02:00:00:00:00:01"), node("x1000c0s1b0n0", "02:00:00:00:00:01")}},
		{name: "unknown profile", set: []wire.Resource{node("x1000c0s0b0n0", "")}},
		{name: "bad xname", set: []wire.Resource{profile("k"), node("x1000c0s0b0", "")}},
		{name: "bad MAC", set: []wire.Resource{profile("k"), node("x1000c0s0b0n0", "02:00")}},
		{name: "bad IP", set: []wire.Resource{profile("k"), {Kind: wire.KindComputeNode, ComputeNode: &wire.ComputeNode{Xname: "x1000c0s0b0n0", ManagementIP: "10.0.0.300"}}}},
		{name: "unknown group node", set: []wire.Resource{{Kind: wire.KindNodeGroup, NodeGroup: &wire.NodeGroup{Name: "g", Nodes: []string{"x1c0s0b0n0"}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Apply(t.Context(), wire.ApplyRequest{Resources: tt.set})
			if !errors.Is(err, problem.ErrInvalid) {
				t.Fatalf("err = %v; want ErrInvalid", err)
			}
			if got, _ := c.ComputeNodes(t.Context(), client.Filter{}); len(got) != 0 {
				t.Errorf("applied %v", got)
			}
		})
	}
}

func TestResourceCRUD(t *testing.T) { pg.EachDB(t, testResourceCRUD) }

func testResourceCRUD(t *testing.T, db testpeer.DB) {
	c := newStoreOnly(t, db)
	ctx := t.Context()
	if _, _, err := c.PutBootProfile(ctx, wire.BootProfile{Name: "compute", KernelURL: "k"}, ""); err != nil {
		t.Fatal(err)
	}
	n := wire.ComputeNode{Xname: "x1000c0s0b0n0", BootMAC: "02:00:00:00:10:00", Arch: "X86", BootProfile: "compute", Groups: []string{"compute"}}
	got, etag, err := c.PutComputeNode(ctx, n, "")
	if err != nil || etag == "" || got.ID != "x1000c0s0b0n0" || got.LastUpdated == nil {
		t.Fatalf("put = %+v, %q, %v", got, etag, err)
	}
	if _, _, err := c.PutComputeNode(ctx, n, `"stale"`); httpclient.StatusCode(err) != 412 {
		t.Errorf("put with a stale If-Match: %v; want 412", err)
	}
	n.Arch = "ARM"
	if _, etag2, err := c.PutComputeNode(ctx, n, etag); err != nil || etag2 == etag {
		t.Errorf("put with the ETag = %q, %v", etag2, err)
	}
	for _, f := range []client.Filter{{Arch: "arm"}, {MAC: "02-00-00-00-10-00"}, {Groups: []string{"compute"}}, {Xnames: []string{"x1000c0s0b0n0"}}} {
		if l, err := c.ComputeNodes(ctx, f); err != nil || len(l) != 1 {
			t.Errorf("filter %+v = %v, %v", f, l, err)
		}
	}
	if l, err := c.ComputeNodes(ctx, client.Filter{Arch: "X86"}); err != nil || len(l) != 0 {
		t.Errorf("filter arch X86 = %v, %v; want none", l, err)
	}
	if err := c.DeleteComputeNode(ctx, "x1000c0s0b0n0", etag); httpclient.StatusCode(err) != 412 {
		t.Errorf("delete with a stale If-Match: %v; want 412", err)
	}
	if err := c.DeleteComputeNode(ctx, "x1000c0s0b0n0", ""); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.ComputeNode(ctx, "x1000c0s0b0n0"); !errors.Is(err, problem.ErrNotFound) {
		t.Errorf("get after delete: %v; want ErrNotFound", err)
	}
}
