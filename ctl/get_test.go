package ctl_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	redswire "github.com/hmsuite/hms/discovery/wire"
	"github.com/hmsuite/hms/statemgr/client"
	"github.com/hmsuite/hms/statemgr/hsm"
)

func ptr[T any](v T) *T { return &v }

// seedHSM puts three nodes, a BMC endpoint and two MACs (one unknown) into
// the HSM at url.
func seedHSM(t *testing.T, url string) {
	t.Helper()
	h := client.New(url, nil, "test")
	ctx := t.Context()
	mustOK(t, h.PostComponents(ctx, []hsm.Component{
		{ID: "x3000c0s1b0n0", State: "Ready", Role: "Compute", NID: ptr(1)},
		{ID: "x3000c0s2b0n0", State: "Standby", Role: "Compute", NID: ptr(2)},
		{ID: "x3000c0s3b0n0", State: "Ready", Role: "Application", SubRole: "UAN", NID: ptr(3)},
	}, false))
	mustOK(t, h.CreateEthernetInterface(ctx, hsm.EthernetInterface{MACAddress: "a4:bf:01:00:00:01", ComponentID: "x3000c0s1b0n0"}))
	mustOK(t, h.CreateEthernetInterface(ctx, hsm.EthernetInterface{MACAddress: "a4:bf:01:00:00:99"}))
}

func TestGet(t *testing.T) {
	urls := startSuite(t)
	seedHSM(t, urls["hsm"])
	e := suiteEnv(t, urls)
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{name: "all nodes", args: []string{"get", "nodes"}, want: []string{"x3000c0s1b0n0", "x3000c0s2b0n0", "x3000c0s3b0n0"}},
		{name: "by state", args: []string{"get", "nodes", "--state", "Ready"}, want: []string{"x3000c0s1b0n0", "x3000c0s3b0n0"}},
		{name: "by role", args: []string{"get", "nodes", "-role", "application"}, want: []string{"x3000c0s3b0n0"}},
		{name: "two states", args: []string{"get", "nodes", "-state", "Ready,Standby", "-role", "Compute"}, want: []string{"x3000c0s1b0n0", "x3000c0s2b0n0"}},
		{name: "no match", args: []string{"get", "nodes", "-state", "Off"}, want: nil},
		{name: "components by type", args: []string{"get", "components", "-type", "Node", "-state", "Standby"}, want: []string{"x3000c0s2b0n0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []hsm.Component
			hmsJSON(t, e, &got, tt.args...)
			var ids []string
			for _, c := range got {
				ids = append(ids, c.ID)
			}
			if diff := cmp.Diff(tt.want, ids); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("unknown", func(t *testing.T) {
		// reds saw no lease: HSM's unowned MAC is not its business.
		var got []redswire.Unknown
		hmsJSON(t, e, &got, "get", "unknown")
		if got == nil || len(got) != 0 {
			t.Errorf("unknown MACs = %#v, want reds' empty list", got)
		}
	})
	t.Run("groups", func(t *testing.T) {
		for _, g := range []string{`{"label":"blue","tags":["team"],"members":{"ids":["x3000c0s1b0n0","x3000c0s2b0n0"]}}`,
			`{"label":"red","members":{"ids":["x3000c0s3b0n0"]}}`} {
			resp, err := http.Post(urls["hsm"]+"/hsm/v2/groups", "application/json", strings.NewReader(g))
			mustOK(t, err)
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				t.Fatalf("create group: status %d", resp.StatusCode)
			}
		}
		var got []hsm.Group
		hmsJSON(t, e, &got, "get", "groups", "-tag", "team")
		if len(got) != 1 || got[0].Label != "blue" || len(got[0].Members.IDs) != 2 {
			t.Errorf("groups tagged team = %+v, want blue with 2 members", got)
		}
		if r := hms(t, e, "get", "groups"); r.err != nil || !strings.Contains(r.stdout, "LABEL") || !strings.Contains(r.stdout, "red") {
			t.Errorf("groups table %q, err %v", r.stdout, r.err)
		}
	})
	t.Run("leases without DHCP", func(t *testing.T) {
		if r := hms(t, e, "get", "leases"); r.code() != 1 || !strings.Contains(r.err.Error(), "no DHCP server") {
			t.Errorf("get leases of a bss without DHCP: code %d, %v", r.code(), r.err)
		}
	})
	t.Run("yaml", func(t *testing.T) {
		r := hms(t, e, "get", "nodes", "-role", "Application", "-o", "yaml")
		if r.err != nil || !strings.Contains(r.stdout, "  ID: x3000c0s3b0n0\n") || !strings.Contains(r.stdout, "  SubRole: UAN\n") {
			t.Errorf("yaml output %q, err %v", r.stdout, r.err)
		}
	})
}

// TestGetTable: the default output is aligned columns under a header; wide
// adds columns; no match prints nothing on stdout and says so on stderr.
func TestGetTable(t *testing.T) {
	urls := startSuite(t)
	seedHSM(t, urls["hsm"])
	e := suiteEnv(t, urls)
	r := hms(t, e, "get", "nodes")
	if r.err != nil {
		t.Fatal(r.err)
	}
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	want := [][]string{
		{"XNAME", "TYPE", "STATE", "FLAG", "ROLE", "SUBROLE", "NID"},
		{"x3000c0s1b0n0", "Node", "Ready", "OK", "Compute", "-", "1"},
		{"x3000c0s2b0n0", "Node", "Standby", "OK", "Compute", "-", "2"},
		{"x3000c0s3b0n0", "Node", "Ready", "OK", "Application", "UAN", "3"},
	}
	var got [][]string
	for _, l := range lines {
		got = append(got, strings.Fields(l))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("table (-want +got):\n%s\n%s", diff, r.stdout)
	}
	// Aligned: every column starts at the same offset on every line.
	for _, col := range []string{"STATE", "ROLE", "NID"} {
		at := strings.Index(lines[0], col)
		for _, l := range lines[1:] {
			if at >= len(l) || l[at-1] != ' ' || l[at] == ' ' {
				t.Errorf("column %s not aligned at %d in %q", col, at, l)
			}
		}
	}
	if w := hms(t, e, "get", "nodes", "-o", "wide"); !strings.HasPrefix(w.stdout, "XNAME") || !strings.Contains(w.stdout, "ENABLED") || !strings.Contains(w.stdout, "true") {
		t.Errorf("wide output %q", w.stdout)
	}
	if n := hms(t, e, "get", "nodes", "-state", "Off"); n.err != nil || n.stdout != "" || !strings.Contains(n.stderr, "no nodes match") {
		t.Errorf("no match: stdout %q stderr %q err %v", n.stdout, n.stderr, n.err)
	}
}

// TestConfigPrecedence: flag > env > user file > system file > default.
func TestConfigPrecedence(t *testing.T) {
	home := t.TempDir()
	user := filepath.Join(home, ".config", "hms", "config.yaml")
	mustOK(t, os.MkdirAll(filepath.Dir(user), 0o755))
	mustOK(t, os.WriteFile(user, []byte("hsm-url: http://user:1\nsls-url: http://user:2\nhbtd-url: http://user:3\n"), 0o644))
	system := filepath.Join(t.TempDir(), "config.yaml")
	mustOK(t, os.WriteFile(system, []byte("hsm-url: http://system:1\nsls-url: http://system:2\nhbtd-url: http://system:3\nhmnfd-url: http://system:4\n"), 0o644))
	vars := map[string]string{"HOME": home, "HMS_HSM_URL": "http://env:1", "HMS_SLS_URL": "http://env:2"}
	var got map[string]struct{ URL, Source string }
	r := runWith(t, vars, system, "config", "-hsm-url", "http://flag:1", "-o", "json")
	mustOK(t, r.err)
	mustOK(t, jsonUnmarshal(r.stdout, &got))
	want := map[string]struct{ URL, Source string }{
		"hsm":   {URL: "http://flag:1", Source: "-hsm-url"},
		"sls":   {URL: "http://env:2", Source: "HMS_SLS_URL"},
		"hbtd":  {URL: "http://user:3", Source: user},
		"hmnfd": {URL: "http://system:4", Source: system},
		"bss":   {URL: "http://127.0.0.1:27778", Source: "default"},
		"pcs":   {URL: "http://127.0.0.1:28007", Source: "default"},
		"bos":   {URL: "http://127.0.0.1:9000", Source: "default"},
		"reds":  {URL: "http://127.0.0.1:8269", Source: "default"},
		"nodes": {URL: "http://127.0.0.1:27780", Source: "default"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	mustOK(t, os.WriteFile(user, []byte("hsm_url: http://user:1\n"), 0o644))
	if r := runWith(t, vars, system, "config"); r.code() != 2 || !strings.Contains(r.err.Error(), `unknown key "hsm_url"`) {
		t.Errorf("misspelt key: code %d, err %v", r.code(), r.err)
	}
	mustOK(t, os.WriteFile(user, []byte("hsm-url: [\n"), 0o644))
	if r := runWith(t, vars, system, "config"); r.code() != 2 || !strings.Contains(r.err.Error(), user) {
		t.Errorf("bad yaml: code %d, err %v", r.code(), r.err)
	}
}
