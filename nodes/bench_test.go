package nodes_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hmsuite/hms/nodes"
	"github.com/hmsuite/hms/nodes/wire"
)

// benchSet is a set of n nodes on Mountain-like hardware (two nodes per
// BMC, two BMCs per slot, eight slots per chassis, eight chassis per
// cabinet), in four groups with two profiles.
func benchSet(n int) []wire.Resource {
	set := []wire.Resource{
		{Kind: wire.KindBootProfile, BootProfile: &wire.BootProfile{Name: "compute", KernelURL: "http://img/vmlinuz",
			InitrdURL: "http://img/initrd", KernelParams: "console=ttyS0", SSHKey: "ssh-ed25519 AAAA bench", AdminUsername: "admin"}},
		{Kind: wire.KindBootProfile, BootProfile: &wire.BootProfile{Name: "gpu", KernelURL: "http://img/vmlinuz-gpu",
			InitrdURL: "http://img/initrd-gpu", ImageURL: "http://img/gpu.squashfs"}},
	}
	for i := range n {
		x := fmt.Sprintf("x%dc%ds%db%dn%d", 1000+i/256, i/32%8, i/4%8, i/2%2, i%2)
		prof := "compute"
		if i%4 == 3 {
			prof = "gpu"
		}
		set = append(set, wire.Resource{Kind: wire.KindComputeNode, ComputeNode: &wire.ComputeNode{
			Xname: x, BootMAC: mac(0x10, i), ManagementIP: ip(10, i), BMCMAC: mac(0x20, i/2), BMCIP: ip(11, i/2),
			Arch: "X86", Groups: []string{fmt.Sprintf("rack%d", i/2500)}, BootProfile: prof}})
	}
	return set
}

func mac(prefix, i int) string {
	return fmt.Sprintf("02:%02x:00:%02x:%02x:%02x", prefix, i>>16&0xff, i>>8&0xff, i&0xff)
}

func ip(net, i int) string { return fmt.Sprintf("10.%d.%d.%d", net, i>>8&0xff, i&0xff) }

// BenchmarkApply measures `hms apply` of a 10,000-node set to a fresh
// suite (fresh-s), the same writes sent straight with the services'
// clients to another fresh suite, planned beforehand (direct-s: the floor
// the services set), and the no-op re-apply, which must write nothing
// (noop-s). ratio is direct-s / fresh-s: 1 means the daemon adds nothing
// to the services' own cost.
func BenchmarkApply(b *testing.B) {
	set := benchSet(10000)
	var fresh, direct, noop time.Duration
	for range b.N {
		b.StopTimer()
		s := newSuite(b)
		t0 := time.Now()
		mustApply(b, s, set)
		fresh += time.Since(t0)

		before := s.counts()
		t0 = time.Now()
		mustApply(b, s, set)
		noop += time.Since(t0)
		if after := s.counts(); fmt.Sprint(after) != fmt.Sprint(before) {
			b.Fatalf("the re-apply wrote: %v -> %v", before, after)
		}

		d := newSuite(b)
		w, err := nodes.PlanFor(context.Background(), d.backend, set)
		if err != nil {
			b.Fatal(err)
		}
		t0 = time.Now()
		if failed := d.backend.Apply(context.Background(), w); len(failed) > 0 {
			b.Fatalf("%d resources failed", len(failed))
		}
		direct += time.Since(t0)
	}
	n := float64(b.N)
	b.ReportMetric(fresh.Seconds()/n, "fresh-s")
	b.ReportMetric(direct.Seconds()/n, "direct-s")
	b.ReportMetric(noop.Seconds()/n, "noop-s")
	b.ReportMetric(direct.Seconds()/fresh.Seconds(), "ratio")
}

func mustApply(b *testing.B, s *suite, set []wire.Resource) {
	b.Helper()
	plan, err := s.nodes.Apply(context.Background(), wire.ApplyRequest{Resources: set})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range plan.Changes {
		if c.Error != "" {
			b.Fatalf("%s %s: %s", c.Kind, c.Name, c.Error)
		}
	}
}
