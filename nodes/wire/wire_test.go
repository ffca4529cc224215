package wire

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestResourceRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		in   Resource
		want string
	}{
		{
			name: "node",
			in:   Resource{Kind: KindComputeNode, ComputeNode: &ComputeNode{Xname: "x1000c0s0b0n0", NID: 1, Groups: []string{"compute"}}},
			want: `{"kind":"ComputeNode","xname":"x1000c0s0b0n0","nid":1,"groups":["compute"]}`,
		},
		{
			name: "profile",
			in:   Resource{Kind: KindBootProfile, BootProfile: &BootProfile{Name: "compute", KernelURL: "http://img/vmlinuz"}},
			want: `{"kind":"BootProfile","name":"compute","kernel_url":"http://img/vmlinuz"}`,
		},
		{
			name: "group",
			in:   Resource{Kind: KindNodeGroup, NodeGroup: &NodeGroup{Name: "compute", Nodes: []string{"x1000c0s0b0n0"}}},
			want: `{"kind":"NodeGroup","name":"compute","nodes":["x1000c0s0b0n0"]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Errorf("marshal = %s, want %s", b, tt.want)
			}
			var back Resource
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.in, back); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResourceUnmarshalErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "no kind", in: `{"xname":"x1"}`, want: "missing kind"},
		{name: "unknown kind", in: `{"kind":"Rack"}`, want: `unknown kind "Rack"`},
		{name: "unknown field", in: `{"kind":"ComputeNode","xname":"x1","bootmac":"02:00"}`, want: `unknown field "bootmac"`},
		{name: "wrong type", in: `{"kind":"ComputeNode","nid":"one"}`, want: "cannot unmarshal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r Resource
			err := json.Unmarshal([]byte(tt.in), &r)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestResourceMarshalRefusesEmpty(t *testing.T) {
	for _, r := range []Resource{{Kind: "Rack"}, {Kind: KindComputeNode}} {
		if _, err := json.Marshal(r); err == nil {
			t.Errorf("Marshal(%+v) succeeded, want an error", r)
		}
	}
}

func FuzzResource(f *testing.F) {
	f.Add(`{"kind":"ComputeNode","xname":"x1000c0s0b0n0","groups":["a"]}`)
	f.Add(`{"kind":"NodeGroup","name":"g","nodes":[]}`)
	f.Fuzz(func(t *testing.T, in string) {
		var r Resource
		if json.Unmarshal([]byte(in), &r) != nil {
			return
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("decoded %q but cannot encode it: %v", in, err)
		}
		var back Resource
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("re-decode of %s: %v", b, err)
		}
	})
}
