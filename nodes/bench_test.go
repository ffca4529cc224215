package nodes_test

import (
	"context"
	"fmt"
	"testing"

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

// BenchmarkApply measures `hms apply` of a 10,000-node set: to a fresh
// suite, and again (the no-op re-apply, which must write nothing).
func BenchmarkApply(b *testing.B) {
	set := benchSet(10000)
	b.Run("fresh", func(b *testing.B) {
		for range b.N {
			b.StopTimer()
			s := newSuite(b)
			b.StartTimer()
			mustApply(b, s, set)
		}
	})
	// direct is the same writes sent straight with the services' clients
	// (planned beforehand, untimed): the floor the services set.
	b.Run("direct", func(b *testing.B) {
		for range b.N {
			b.StopTimer()
			s := newSuite(b)
			w, err := nodes.PlanFor(context.Background(), s.backend, set)
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if failed := s.backend.Apply(context.Background(), w); len(failed) > 0 {
				b.Fatalf("%d resources failed", len(failed))
			}
		}
	})
	b.Run("noop", func(b *testing.B) {
		s := newSuite(b)
		mustApply(b, s, set)
		before := s.counts()
		b.ResetTimer()
		for range b.N {
			mustApply(b, s, set)
		}
		b.StopTimer()
		if after := s.counts(); fmt.Sprint(after) != fmt.Sprint(before) {
			b.Fatalf("the re-apply wrote: %v -> %v", before, after)
		}
	})
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
