package nodes

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/nodes/wire"
)

// gateBackend plans no writes; its Plan stops, for an apply whose scope
// holds node held, until release is closed, after telling planning.
type gateBackend struct {
	held              string
	planning, release chan struct{}
}

func (g *gateBackend) Plan(ctx context.Context, _, _ *State, _ map[string]Secret, sc *Scope) (*Writes, error) {
	if !sc.All && sc.node(g.held) {
		close(g.planning)
		<-g.release
	}
	return &Writes{Changes: map[Key][]wire.ServiceChange{}}, nil
}

func (g *gateBackend) Apply(context.Context, *Writes) map[Key]error { return nil }

func (g *gateBackend) Observe(context.Context, string) wire.Observed { return wire.Observed{} }

func lockNode(x, ip string) wire.Resource {
	return wire.Resource{Kind: wire.KindComputeNode, ComputeNode: &wire.ComputeNode{Xname: x, NID: 1, ManagementIP: ip,
		BootMAC: "02:00:00:00:10:0" + x[1:2]}}
}

// TestApplyOfOtherNodesProceeds: while an apply of one node is held in
// its plan, an apply of another node, a read of the held one and a dry run
// of other resources go on; the held apply then ends.
func TestApplyOfOtherNodesProceeds(t *testing.T) {
	store, err := OpenStore(t.Context(), filepath.Join(t.TempDir(), "nodes.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	g := &gateBackend{held: "x1000c0s0b0n0", planning: make(chan struct{}), release: make(chan struct{})}
	s := New(store, Config{Backend: g})
	ctx := t.Context()
	a, b := lockNode("x1000c0s0b0n0", "10.1.0.1"), lockNode("x2000c0s0b0n0", "10.1.0.2")
	b.ComputeNode.NID = 2
	if _, err := s.Apply(ctx, wire.ApplyRequest{Resources: []wire.Resource{a, b}, Prune: true}); err != nil {
		t.Fatal(err)
	}
	a.ComputeNode.ManagementIP, b.ComputeNode.ManagementIP = "10.1.0.11", "10.1.0.12"
	held := make(chan error, 1)
	go func() {
		_, err := s.Apply(ctx, wire.ApplyRequest{Resources: []wire.Resource{a}})
		held <- err
	}()
	<-g.planning
	if _, err := s.Apply(ctx, wire.ApplyRequest{Resources: []wire.Resource{b}}); err != nil {
		t.Fatalf("apply of another node: %v", err)
	}
	if _, err := s.Get(ctx, wire.KindComputeNode, a.ComputeNode.Xname); err != nil {
		t.Fatalf("read of the held node: %v", err)
	}
	close(g.release)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	for _, n := range []wire.Resource{a, b} {
		it, err := s.Get(ctx, wire.KindComputeNode, n.ComputeNode.Xname)
		if err != nil || it.Resource.ComputeNode.ManagementIP != n.ComputeNode.ManagementIP {
			t.Errorf("%s: %+v, %v; want management_ip %s", n.ComputeNode.Xname, it.Resource.ComputeNode, err, n.ComputeNode.ManagementIP)
		}
	}
}

// TestLockKeys: an apply locks its resources and what their writes share.
func TestLockKeys(t *testing.T) {
	stored := newState()
	stored.Nodes["x1000c0s0b0n0"] = &wire.ComputeNode{Xname: "x1000c0s0b0n0", NID: 1, BootProfile: "old"}
	stored.Groups["rack"] = &wire.NodeGroup{Name: "rack", Nodes: []string{"x1000c0s0b0n0"}, BootProfile: "rackboot"}
	in := func(rs ...wire.Resource) *set {
		st, err := normalise(rs)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	node := func(x string, nid int, prof string, groups ...string) wire.Resource {
		return wire.Resource{Kind: wire.KindComputeNode, ComputeNode: &wire.ComputeNode{Xname: x, NID: nid, BootProfile: prof,
			Groups: groups, BMCMAC: "02:00:00:00:20:00", BMCCredentialsFile: "bmc.yaml"}}
	}
	for _, tt := range []struct {
		name string
		in   *set
		req  wire.ApplyRequest
		want []string
	}{
		{name: "update", in: in(node("x1000c0s0b0n0", 1, "new")), want: []string{"BootProfile/new", "BootProfile/old",
			"BootProfile/rackboot", "ComputeNode/x1000c0s0b0n0", "NodeGroup/rack", "bmc/x1000c0s0b0", "secret/bmc.yaml"}},
		{name: "create", in: in(node("x1000c0s1b0n0", 0, "", "gpu")), want: []string{"ComputeNode/x1000c0s1b0n0",
			"NodeGroup/gpu", "bmc/x1000c0s1b0", "owner", "secret/bmc.yaml"}},
		{name: "new NID", in: in(node("x1000c0s0b0n0", 7, "old")), want: []string{"BootProfile/old",
			"BootProfile/rackboot", "ComputeNode/x1000c0s0b0n0", "NodeGroup/rack", "bmc/x1000c0s0b0", "owner", "secret/bmc.yaml"}},
		{name: "delete", in: in(node("x1000c0s0b0n0", 0, "")), req: wire.ApplyRequest{Delete: true}, want: []string{"BootProfile/old",
			"BootProfile/rackboot", "ComputeNode/x1000c0s0b0n0", "NodeGroup/rack", "bmc/x1000c0s0b0", "owner"}},
		{name: "group", in: in(wire.Resource{Kind: wire.KindNodeGroup, NodeGroup: &wire.NodeGroup{Name: "rack", BootProfile: "other"}}),
			want: []string{"BootProfile/other", "BootProfile/rackboot", "NodeGroup/rack"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for k := range lockKeys(stored, tt.in, tt.req) {
				got = append(got, k)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("keys %v, want %v", got, tt.want)
			}
		})
	}
}

// TestKeyLocks: disjoint keys are taken at once, a held key makes the
// next taker wait (until its context ends), and a prune waits for all.
func TestKeyLocks(t *testing.T) {
	l := newKeyLocks()
	ctx := t.Context()
	relA, err := l.lock(ctx, map[string]bool{"a": true}, false)
	if err != nil {
		t.Fatal(err)
	}
	relB, err := l.lock(ctx, map[string]bool{"b": true}, false)
	if err != nil {
		t.Fatalf("disjoint keys: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := l.lock(cancelled, map[string]bool{"a": true, "c": true}, false); err == nil {
		t.Fatal("a held key was taken again")
	}
	if _, err := l.lock(cancelled, nil, true); err == nil {
		t.Fatal("a prune ran beside other applies")
	}
	got := make(chan error, 1)
	go func() {
		rel, err := l.lock(ctx, nil, true)
		if err == nil {
			rel()
		}
		got <- err
	}()
	relA()
	relB()
	if err := <-got; err != nil {
		t.Fatalf("a prune after the others: %v", err)
	}
}

// TestPruneNotStarved: once a prune waits, a new apply waits behind it,
// even of keys no one holds (a steady flow of small applies, each taking
// its keys before the last gave its own back, kept a prune waiting for
// ever); a prune that gives up lets the applies held back go on.
func TestPruneNotStarved(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newKeyLocks()
		ctx := t.Context()
		relA, err := l.lock(ctx, map[string]bool{"a": true}, false)
		if err != nil {
			t.Fatal(err)
		}
		var order []string
		var mu sync.Mutex
		note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
		pruned := make(chan struct{})
		go func() {
			defer close(pruned)
			rel, err := l.lock(ctx, nil, true)
			if err != nil {
				t.Error(err)
				return
			}
			note("prune")
			rel()
		}()
		synctest.Wait() // the prune waits for a
		applied := make(chan struct{})
		go func() {
			defer close(applied)
			rel, err := l.lock(ctx, map[string]bool{"b": true}, false)
			if err != nil {
				t.Error(err)
				return
			}
			note("b")
			rel()
		}()
		synctest.Wait()
		mu.Lock()
		early := slices.Clone(order)
		mu.Unlock()
		if len(early) != 0 {
			t.Fatalf("%v went ahead of the prune's wait for a", early)
		}
		relA()
		<-pruned
		<-applied
		if d := cmp.Diff([]string{"prune", "b"}, order); d != "" {
			t.Errorf("order (-want +got):\n%s", d)
		}

		relC, err := l.lock(ctx, map[string]bool{"c": true}, false)
		if err != nil {
			t.Fatal(err)
		}
		pctx, cancel := context.WithCancel(ctx)
		gaveUp := make(chan error, 1)
		go func() { _, err := l.lock(pctx, nil, true); gaveUp <- err }()
		synctest.Wait()
		got := make(chan error, 1)
		go func() {
			rel, err := l.lock(ctx, map[string]bool{"d": true}, false)
			if err == nil {
				rel()
			}
			got <- err
		}()
		synctest.Wait()
		cancel()
		if err := <-gaveUp; err == nil {
			t.Fatal("the cancelled prune took the locks")
		}
		if err := <-got; err != nil {
			t.Fatalf("the apply held back by a prune that gave up: %v", err)
		}
		relC()
	})
}
