package nodes_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/ipxe/bss"
	"github.com/hmsuite/hms/layout/sls"
	"github.com/hmsuite/hms/nodes"
	"github.com/hmsuite/hms/nodes/wire"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// threeNodes is the example set, three nodes long.
func threeNodes(kernel string) []wire.Resource {
	set := []wire.Resource{{Kind: wire.KindBootProfile, BootProfile: &wire.BootProfile{Name: "compute",
		KernelURL: kernel, InitrdURL: "http://img/initrd", KernelParams: "console=ttyS0",
		SSHKey: "ssh-ed25519 AAAA student@lab", AdminUsername: "student"}}}
	for i := range 3 {
		set = append(set, wire.Resource{Kind: wire.KindComputeNode, ComputeNode: &wire.ComputeNode{
			Xname: fmt.Sprintf("x1000c0s%db0n0", i), NID: i + 1, BootMAC: fmt.Sprintf("02:00:00:00:10:%02x", i),
			ManagementIP: fmt.Sprintf("10.1.0.%d", 10+i), BMCMAC: fmt.Sprintf("02:00:00:00:20:%02x", i),
			BMCIP: fmt.Sprintf("10.2.0.%d", 10+i), Arch: "X86", Groups: []string{"compute"}, BootProfile: "compute"}})
	}
	return set
}

func TestApplyTranslates(t *testing.T) { pg.EachDB(t, testApplyTranslates) }

func testApplyTranslates(t *testing.T, db testpeer.DB) {
	s := newSuiteOn(t, db, "")
	ctx := t.Context()
	set := threeNodes("http://img/vmlinuz")

	if _, err := s.nodes.Apply(ctx, wire.ApplyRequest{Resources: set, DryRun: true}); err != nil {
		t.Fatal(err)
	}
	if got := s.counts(); got["sls"]+got["hsm"]+got["bss"] != 0 {
		t.Fatalf("dry run wrote %v", got)
	}
	plan, err := s.nodes.Apply(ctx, wire.ApplyRequest{Resources: set})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range plan.Changes {
		if c.Error != "" {
			t.Fatalf("%s %s: %s", c.Kind, c.Name, c.Error)
		}
	}
	checkNode(t, s, "x1000c0s1b0n0", 2, "10.1.0.11")

	bp, err := s.bss.BootParams(ctx, bss.ParamsQuery{Names: []string{"x1000c0s1b0n0"}})
	if err != nil || len(bp) != 1 {
		t.Fatalf("bss = %v, %v", bp, err)
	}
	if bp[0].Kernel != "http://img/vmlinuz" || bp[0].Params != "console=ttyS0" {
		t.Errorf("bss entry = %+v", bp[0])
	}
	if users := fmt.Sprint(bp[0].CloudInit.UserData["users"]); !strings.Contains(users, "ssh-ed25519 AAAA student@lab") {
		t.Errorf("user-data users = %s; want the SSH key", users)
	}
	groups, err := s.hsm.Groups(ctx, url.Values{"group": {"compute"}})
	if err != nil || len(groups) != 1 || len(groups[0].Members.IDs) != 3 {
		t.Errorf("group compute = %+v, %v", groups, err)
	}

	before := s.counts()
	plan, err = s.nodes.Apply(ctx, wire.ApplyRequest{Resources: set})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, s.counts()); diff != "" {
		t.Errorf("re-apply wrote to the services (-before +after):\n%s", diff)
	}
	if n := plan.Counts()[wire.ActionUnchanged]; n != len(set) {
		t.Errorf("re-apply: %d unchanged; want %d (%v)", n, len(set), plan.Counts())
	}
}

// checkNode asserts SLS and HSM hold node x as declared.
func checkNode(t *testing.T, s *suite, x string, nid int, ip string) {
	t.Helper()
	ctx := t.Context()
	hw, err := s.sls.GetHardware(ctx, x)
	if err != nil {
		t.Fatalf("sls %s: %v", x, err)
	}
	if got := string(hw.ExtraProperties); !strings.Contains(got, fmt.Sprintf(`"NID":%d`, nid)) {
		t.Errorf("sls %s ExtraProperties = %s", x, got)
	}
	if _, err := s.sls.GetHardware(ctx, strings.TrimSuffix(x, "n0")); err != nil {
		t.Errorf("sls BMC of %s: %v", x, err)
	}
	c, err := s.hsm.Component(ctx, x)
	if err != nil || c.NID == nil || *c.NID != nid || c.Role != "Compute" || c.Arch != "X86" {
		t.Errorf("hsm %s = %+v, %v", x, c, err)
	}
	eis, err := s.hsm.EthernetInterfaces(ctx, url.Values{"ComponentID": {x}})
	if err != nil || len(eis) != 1 || len(eis[0].IPAddresses) != 1 || eis[0].IPAddresses[0].IPAddress != ip {
		t.Errorf("hsm interfaces of %s = %+v, %v", x, eis, err)
	}
	owned, err := s.hsm.Groups(ctx, url.Values{"group": {nodes.OwnerGroup}})
	if err != nil || len(owned) != 1 || !slices.Contains(owned[0].Members.IDs, x) {
		t.Errorf("owner group = %+v, %v; want %s in it", owned, err, x)
	}
}

func TestApplyEditPruneKeepsHandMade(t *testing.T) { pg.EachDB(t, testApplyEditPruneKeepsHandMade) }

func testApplyEditPruneKeepsHandMade(t *testing.T, db testpeer.DB) {
	s := newSuiteOn(t, db, "")
	ctx := t.Context()
	set := threeNodes("http://img/vmlinuz")
	if _, err := s.nodes.Apply(ctx, wire.ApplyRequest{Resources: set}); err != nil {
		t.Fatal(err)
	}
	// A node made by hand, beside the owned ones.
	if _, err := s.sls.PutHardware(ctx, sls.Hardware{Xname: "x1000c0s9b0n0", Class: sls.River}); err != nil {
		t.Fatal(err)
	}
	if err := s.hsm.PostComponents(ctx, []hsm.Component{{ID: "x1000c0s9b0n0", Type: "Node", State: "Off"}}, false); err != nil {
		t.Fatal(err)
	}
	if err := s.bss.PutBootParams(ctx, bss.BootParams{Hosts: []string{"x1000c0s9b0n0"}, Kernel: "http://hand/k"}); err != nil {
		t.Fatal(err)
	}

	// One node moves to its own profile: only its BSS entry changes.
	edited := append(threeNodes("http://img/vmlinuz"), wire.Resource{Kind: wire.KindBootProfile,
		BootProfile: &wire.BootProfile{Name: "debug", KernelURL: "http://img/debug"}})
	edited[3].ComputeNode.BootProfile = "debug"
	before := s.counts()
	if _, err := s.nodes.Apply(ctx, wire.ApplyRequest{Resources: edited}); err != nil {
		t.Fatal(err)
	}
	after := s.counts()
	if after["sls"] != before["sls"] || after["hsm"] != before["hsm"] || after["bss"] != before["bss"]+1 {
		t.Errorf("editing one node's kernel wrote %v -> %v; want one bss write", before, after)
	}

	// Prune the edited node away.
	plan, err := s.nodes.Apply(ctx, wire.ApplyRequest{Resources: edited[:3], Prune: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := plan.Counts()[wire.ActionDelete]; n != 2 {
		t.Errorf("prune deleted %d resources; want 2 (node and profile): %v", n, plan.Counts())
	}
	if _, err := s.hsm.Component(ctx, "x1000c0s2b0n0"); err == nil {
		t.Error("pruned node still in HSM")
	}
	if _, err := s.sls.GetHardware(ctx, "x1000c0s2b0n0"); err == nil {
		t.Error("pruned node still in SLS")
	}
	if bp, err := s.bss.BootParams(ctx, bss.ParamsQuery{Names: []string{"x1000c0s2b0n0"}}); err == nil && len(bp) > 0 && bp[0].Kernel != "" {
		t.Errorf("pruned node still in BSS: %+v", bp)
	}
	if _, err := s.hsm.Component(ctx, "x1000c0s9b0n0"); err != nil {
		t.Errorf("hand-made node: %v", err)
	}
	if _, err := s.sls.GetHardware(ctx, "x1000c0s9b0n0"); err != nil {
		t.Errorf("hand-made node in SLS: %v", err)
	}
	checkNode(t, s, "x1000c0s1b0n0", 2, "10.1.0.11")
}

func TestApplyEndpointSecret(t *testing.T) { pg.EachDB(t, testApplyEndpointSecret) }

func testApplyEndpointSecret(t *testing.T, db testpeer.DB) {
	s := newSuiteOn(t, db, "")
	ctx := t.Context()
	set := threeNodes("http://img/vmlinuz")[:2]
	n := set[1].ComputeNode
	// A loopback BMC: HSM's discovery of it stays on this host.
	n.BMCIP, n.BMCCredentialsFile = "127.0.0.1", "bmc.json"
	secrets := map[string]wire.Credentials{"bmc.json": {Username: "root", Password: "s3cret-pw"}}
	if _, err := s.nodes.Apply(ctx, wire.ApplyRequest{Resources: set}); err == nil {
		t.Fatal("a node whose credentials file was not sent was applied")
	}
	plan, err := s.nodes.Apply(ctx, wire.ApplyRequest{Resources: set, Secrets: secrets})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := s.hsm.RedfishEndpoint(ctx, "x1000c0s0b0")
	if err != nil || ep.User != "root" || ep.IPAddress != "127.0.0.1" {
		t.Errorf("endpoint = %+v, %v", ep, err)
	}
	got, _, err := s.nodes.ComputeNode(ctx, n.Xname)
	if err != nil {
		t.Fatal(err)
	}
	if got.Observed == nil || got.Observed.State != hsm.StateOff {
		t.Errorf("observed = %+v; want HSM's Off", got.Observed)
	}
	for _, v := range []any{plan, got} {
		if b, _ := json.Marshal(v); strings.Contains(string(b), "s3cret-pw") {
			t.Errorf("the password is shown back: %s", b)
		}
	}
	// The stored secret serves a later apply that does not send it.
	before := s.counts()
	if _, err := s.nodes.Apply(ctx, wire.ApplyRequest{Resources: set}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, s.counts()); diff != "" {
		t.Errorf("re-apply without secrets wrote (-before +after):\n%s", diff)
	}
	// Another set (another rack) whose credentials file has the same name
	// but other content must not replace this node's login.
	other := threeNodes("http://img/vmlinuz")
	rack2 := []wire.Resource{other[0], other[3]}
	rack2[1].ComputeNode.BMCIP, rack2[1].ComputeNode.BMCCredentialsFile = "127.0.0.2", "bmc.json"
	_, err = s.nodes.Apply(ctx, wire.ApplyRequest{Resources: rack2, Secrets: map[string]wire.Credentials{"bmc.json": {Username: "rack2", Password: "other-pw"}}})
	if !errors.Is(err, problem.ErrConflict) || !strings.Contains(err.Error(), n.Xname) {
		t.Errorf("same-named credentials of another set: %v, want a conflict naming %s", err, n.Xname)
	}
	if ep, err := s.hsm.RedfishEndpoint(ctx, "x1000c0s0b0"); err != nil || ep.User != "root" {
		t.Errorf("endpoint after the refused apply = %+v, %v; want root's login kept", ep, err)
	}
	// The same content is accepted, and the stored secret is unsealed once
	// (for the check against the other set, and for the plan).
	opens := s.opens.Load()
	if _, err = s.nodes.Apply(ctx, wire.ApplyRequest{Resources: rack2, Secrets: secrets, DryRun: true}); err != nil {
		t.Fatalf("same-named credentials of the same content: %v", err)
	}
	if n := s.opens.Load() - opens; n != 1 {
		t.Errorf("the apply unsealed the stored credentials %d times, want 1", n)
	}
}
