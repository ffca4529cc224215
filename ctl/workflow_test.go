package ctl_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmsuite/hms/ctl"
	"github.com/hmsuite/hms/internal/problem"
	slsclient "github.com/hmsuite/hms/layout/client"
	"github.com/hmsuite/hms/statemgr/client"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// TestAdminSteps walks the admin steps of the add-node and remove-node
// workflows with the CLI: load a layout, add a node with its BMC and switch
// port, boot its role, see it in one view, remove it. Each bad command
// changes nothing.
func TestAdminSteps(t *testing.T) {
	urls := startSuite(t)
	e := suiteEnv(t, urls)
	sls := slsclient.New(urls["sls"], nil)
	loadLayout(t, e, sls)
	addNode(t, e, sls)
	// Discovery would put the node in HSM; HSM takes NID and role from SLS.
	h := client.New(urls["hsm"], nil, "test")
	mustOK(t, h.PostComponents(t.Context(), []hsm.Component{{ID: "x3000c0s30b0n0", State: "On"}}, false))
	describeNode(t, e)

	if r := hms(t, e, "node", "remove", "x3000c0s30b0n0"); r.err != nil || !strings.Contains(r.stdout, "removed switch port x3000c0w14j30") {
		t.Fatalf("node remove: %v\n%s", r.err, r.stdout)
	}
	for _, x := range []string{"x3000c0s30b0n0", "x3000c0s30b0", "x3000c0w14j30"} {
		if _, err := sls.GetHardware(t.Context(), x); !errors.Is(err, problem.ErrNotFound) {
			t.Errorf("%s after node remove: %v, want not found", x, err)
		}
	}
}

// loadLayout: layout load puts the dump in SLS; a file that is not a dump
// changes nothing.
func loadLayout(t *testing.T, e func(string) string, sls *slsclient.Client) {
	t.Helper()
	ctx := t.Context()
	r := hms(t, e, "layout", "load", filepath.Join("testdata", "river.json"))
	if r.err != nil || !strings.Contains(r.stdout, "68 hardware objects, 2 networks") || !strings.Contains(r.stderr, "KB sent") {
		t.Fatalf("layout load: %v\nstdout %q\nstderr %q", r.err, r.stdout, r.stderr)
	}
	notDump := filepath.Join(t.TempDir(), "notes.txt")
	mustOK(t, os.WriteFile(notDump, []byte("x3000c0s1b0n0 is the login node\n"), 0o644))
	if r := hms(t, e, "layout", "load", notDump); r.code() != 1 || !strings.Contains(r.err.Error(), "not an SLS dump") {
		t.Errorf("layout load of a text file: code %d, %v", r.code(), r.err)
	}
	if hw, err := sls.ListHardware(ctx); err != nil || len(hw) != 68 {
		t.Fatalf("SLS after a refused load has %d objects (%v), want the 68 loaded", len(hw), err)
	}
}

// addNode: node add writes the node, its BMC and its switch port; bad or
// repeated commands change nothing.
func addNode(t *testing.T, e func(string) string, sls *slsclient.Client) {
	t.Helper()
	ctx := t.Context()

	add := []string{"node", "add", "x3000c0s30b0n0", "-nid", "300", "-role", "Application", "-subrole", "UAN",
		"-switch-port", "x3000c0w14j30", "-vendor-port", "ethernet1/1/30"}
	if r := hms(t, e, add...); r.err != nil {
		t.Fatalf("node add: %v", r.err)
	}
	n, err := sls.GetHardware(ctx, "x3000c0s30b0n0")
	mustOK(t, err)
	if p, _ := n.Node(); p.NID != 300 || p.Role != "Application" || p.SubRole != "UAN" {
		t.Errorf("SLS node props %+v", p)
	}
	port, err := sls.GetHardware(ctx, "x3000c0w14j30")
	mustOK(t, err)
	if p, _ := port.Connector(); len(p.NodeNics) != 1 || p.NodeNics[0] != "x3000c0s30b0" || p.VendorName != "ethernet1/1/30" {
		t.Errorf("SLS switch port props %+v", p)
	}
	for _, bad := range []struct {
		args []string
		code int
	}{
		{args: add, code: 1}, // already there
		{args: []string{"node", "add", "x3000c0s31b0", "-nid", "301"}, code: 2},
		{args: []string{"node", "add", "x3000c0s31b0n0"}, code: 2},
		{args: []string{"node", "remove", "x3000c0s31b0n0"}, code: 1},
		{args: []string{"boot", "set", "-roles", "Application"}, code: 2},
	} {
		if r := hms(t, e, bad.args...); r.code() != bad.code || strings.Contains(r.err.Error(), "\n") {
			t.Errorf("hms %v: code %d (%v), want %d", bad.args, r.code(), r.err, bad.code)
		}
	}
	if hw, _ := sls.ListHardware(ctx); len(hw) != 71 {
		t.Errorf("SLS has %d objects after the refused commands, want 71 (68 + node, BMC, port)", len(hw))
	}
}

// describeNode: the node's role gets boot parameters, and describe shows
// every daemon's view of it.
func describeNode(t *testing.T, e func(string) string) {
	t.Helper()
	if r := hms(t, e, "boot", "set", "-roles", "Application", "-kernel", "http://images/vmlinuz", "-params", "console=ttyS0"); r.err != nil {
		t.Fatalf("boot set: %v", r.err)
	}
	var v ctl.NodeView
	hmsJSON(t, e, &v, "describe", "node", "x3000c0s30b0n0")
	if v.Layout == nil || v.State == nil || v.State.Role != "Application" || v.State.NID == nil || *v.State.NID != 300 {
		t.Errorf("describe: layout %+v, state %+v", v.Layout, v.State)
	}
	if v.Boot == nil || v.Boot.Kernel != "http://images/vmlinuz" || v.Boot.Params != "console=ttyS0" {
		t.Errorf("describe: boot %+v, want the Application role's", v.Boot)
	}
	if v.Heartbeat == nil || v.Heartbeat.Heartbeating || len(v.Errors) > 0 {
		t.Errorf("describe: heartbeat %+v, errors %v", v.Heartbeat, v.Errors)
	}
	if r := hms(t, e, "describe", "node", "x3000c0s30b0n0"); r.err != nil || !strings.Contains(r.stdout, "http://images/vmlinuz") {
		t.Errorf("describe table: %v\n%s", r.err, r.stdout)
	}
	if r := hms(t, e, "describe", "node", "x3000c0s99b0n0"); r.code() != 1 || !errors.Is(r.err, problem.ErrNotFound) {
		t.Errorf("describe of an unknown node: code %d, %v", r.code(), r.err)
	}
}
