package fanout

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/statemgr/hsm"
)

func TestMatch(t *testing.T) {
	subs := []struct {
		name string
		sub  Subscription
	}{
		{"states", Subscription{States: []string{"Off", "Ready"}, Components: []string{"x1c0s0b0n0", "x1c0s0b0n1"}}},
		{"roles", Subscription{Roles: []string{"Compute"}, Components: []string{"allnodes"}}},
		{"subroles", Subscription{SubRoles: []string{"Worker"}, Components: []string{"all"}}},
		{"swstatus", Subscription{SoftwareStatus: []string{"AdminDown"}}},
		{"enabled", Subscription{Enabled: boolp(true), Components: []string{"x1c0s0b0n1"}}},
		{"nodes-and-bmc", Subscription{States: []string{"On"}, Components: []string{"allnodes", "x1c0s0b0"}}},
		{"shared-a", Subscription{States: []string{"Halt"}, Components: []string{"x1c0s0b0n0"}}},
		{"shared-b", Subscription{States: []string{"Halt"}, Components: []string{"x1c0s0b0n1"}}},
	}
	ix := newIndex()
	for i, s := range subs {
		s.sub.Url = "http://sub/" + s.name
		if s.name == "shared-b" {
			s.sub.Url = "http://sub/shared-a"
		}
		if err := s.sub.validate(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		ix.put(int64(i+1), Key{Component: "x9c0s0b0n0", Agent: s.name}, s.sub)
	}
	const n0, n1, bmc = "x1c0s0b0n0", "x1c0s0b0n1", "x1c0s0b0"
	tests := []struct {
		name string
		scn  hsm.SCN
		want map[string][]string
	}{
		{name: "state filters components", scn: hsm.SCN{State: "Off", Components: []string{n0, "x2c0s0b0n0"}},
			want: map[string][]string{"http://sub/states": {n0}}},
		{name: "state is case-insensitive", scn: hsm.SCN{State: "ready", Components: []string{n1}},
			want: map[string][]string{"http://sub/states": {n1}}},
		{name: "state nobody watches", scn: hsm.SCN{State: "Standby", Components: []string{n0}}, want: nil},
		{name: "role with allnodes skips non-nodes", scn: hsm.SCN{Role: "Compute", Components: []string{n0, bmc}},
			want: map[string][]string{"http://sub/roles": {n0}}},
		{name: "subrole is matched", scn: hsm.SCN{SubRole: "Worker", Components: []string{bmc, n1}},
			want: map[string][]string{"http://sub/subroles": {bmc, n1}}},
		{name: "subrole differs from role", scn: hsm.SCN{Role: "Storage", SubRole: "Master", Components: []string{n0}}, want: nil},
		{name: "role and subrole both match", scn: hsm.SCN{Role: "Compute", SubRole: "Worker", Components: []string{n0}},
			want: map[string][]string{"http://sub/roles": {n0}, "http://sub/subroles": {n0}}},
		{name: "software status with no components watches all", scn: hsm.SCN{SoftwareStatus: "admindown", Components: []string{bmc}},
			want: map[string][]string{"http://sub/swstatus": {bmc}}},
		{name: "enabled change", scn: hsm.SCN{Enabled: boolp(false), Components: []string{n0, n1}},
			want: map[string][]string{"http://sub/enabled": {n1}}},
		{name: "allnodes plus an explicit bmc", scn: hsm.SCN{State: "On", Components: []string{bmc, n0, "x1c0s0b1"}},
			want: map[string][]string{"http://sub/nodes-and-bmc": {bmc, n0}}},
		{name: "two subscriptions on one URL get one delivery", scn: hsm.SCN{State: "Halt", Components: []string{n1, n0}},
			want: map[string][]string{"http://sub/shared-a": {n1, n0}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got map[string][]string
			for _, m := range ix.match(&tc.scn) {
				if got == nil {
					got = map[string][]string{}
				}
				if _, dup := got[m.ref.url]; dup {
					t.Errorf("URL %s matched twice", m.ref.url)
				}
				got[m.ref.url] = m.comps
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("match (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("removed subscription no longer matches", func(t *testing.T) {
		ix.remove(3)
		if got := ix.match(&hsm.SCN{SubRole: "Worker", Components: []string{n0}}); len(got) != 0 {
			t.Errorf("match after remove = %v, want nothing", got)
		}
	})
}

func TestValidateSubscription(t *testing.T) {
	tests := []struct {
		name    string
		sub     Subscription
		want    Subscription
		wantErr string
	}{
		{name: "canonical form", sub: Subscription{Components: []string{"X1C0S0B0N01", "ALL", "x1c0s0b0n1"}, States: []string{"off", "ON", "Off"}, Url: "http://h/x"},
			want: Subscription{Components: []string{"all", "x1c0s0b0n1"}, States: []string{"Off", "On"}, Url: "http://h/x"}},
		{name: "bad component", sub: Subscription{Components: []string{"node7"}, States: []string{"On"}, Url: "http://h/x"}, wantErr: "Components[0]"},
		{name: "unknown state", sub: Subscription{States: []string{"Sleepy"}, Url: "http://h/x"}, wantErr: "States[0]"},
		{name: "ftp url", sub: Subscription{States: []string{"On"}, Url: "ftp://h/x"}, wantErr: "Url"},
		{name: "no host", sub: Subscription{States: []string{"On"}, Url: "http:///x"}, wantErr: "Url"},
		{name: "watches nothing", sub: Subscription{Enabled: boolp(false), Url: "http://h/x"}, wantErr: "watches nothing"},
		{name: "bad role", sub: Subscription{Roles: []string{"a b"}, Url: "http://h/x"}, wantErr: "Roles[0]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.sub.validate()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("validate error = %v, want one naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, tc.sub); diff != "" {
				t.Errorf("canonical form (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseSubscriber(t *testing.T) {
	tests := []struct {
		in      string
		want    Key
		wantErr bool
	}{
		{in: "x1c0s0b0n0", want: Key{Component: "x1c0s0b0n0"}},
		{in: "handler@X1C0S0B0N00", want: Key{Component: "x1c0s0b0n0", Agent: "handler"}},
		{in: "cray-bss@x0", want: Key{Component: "x0", Agent: "cray-bss"}}, // what BSS sends
		{in: "bss@node7", wantErr: true},
		{in: "@x1c0s0b0n0", wantErr: true},
		{in: "a b@x1c0s0b0n0", wantErr: true},
		{in: "", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseSubscriber(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("ParseSubscriber(%q) error = %v, wantErr %v", tc.in, err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("key (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMatchAfterRemovals: the candidate lists stay exact when subscriptions
// are removed from their middle (the last entry takes the gap), and a
// subscription triggered through two attributes is matched once.
func TestMatchAfterRemovals(t *testing.T) {
	ix := newIndex()
	const n = 50
	for i := range n {
		sub := Subscription{States: []string{"Off"}, Roles: []string{"Compute"}, Components: []string{"all"}, Url: fmt.Sprintf("http://sub/%d", i)}
		if err := sub.validate(); err != nil {
			t.Fatal(err)
		}
		ix.put(int64(i+1), Key{Component: "x9c0s0b0n0", Agent: fmt.Sprint("a", i)}, sub)
	}
	want := map[string]bool{}
	for i := range n {
		if i%3 == 1 {
			ix.remove(int64(i + 1))
			continue
		}
		want[fmt.Sprintf("http://sub/%d", i)] = true
	}
	for _, scn := range []hsm.SCN{
		{State: "Off", Components: []string{"x1c0s0b0n0"}},
		{State: "Off", Role: "Compute", Components: []string{"x1c0s0b0n0"}},
	} {
		got := map[string]bool{}
		for _, m := range ix.match(&scn) {
			if got[m.ref.url] {
				t.Errorf("%+v: URL %s matched twice", scn, m.ref.url)
			}
			got[m.ref.url] = true
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%+v: matched (-want +got):\n%s", scn, diff)
		}
	}
}
