package ctl_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmsuite/hms/orchestrator"
)

// TestBos: hms bos creates, lists, describes and deletes session templates
// and sessions, and reads components and a session's status, against the
// real bos (and the hsm, bss and pcs it checks a session with).
func TestBos(t *testing.T) {
	urls := startSuite(t)
	seedHSM(t, urls["hsm"])
	e := suiteEnv(t, urls)
	images := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `{"version":"1.0","artifacts":[{"link":{"path":"s3://b/k"},"type":"application/vnd.cray.image.kernel"}]}`)
	}))
	t.Cleanup(images.Close)
	file := filepath.Join(t.TempDir(), "compute.yaml")
	mustOK(t, os.WriteFile(file, []byte("name: compute\ndescription: the compute image\nboot_sets:\n  c:\n    type: s3\n    path: "+
		images.URL+"/manifest.json\n    node_list: [x3000c0s1b0n0, x3000c0s2b0n0]\n"), 0o600))

	ok := func(args ...string) string {
		t.Helper()
		r := hms(t, e, args...)
		if r.err != nil {
			t.Fatalf("hms %s: %v (stderr %q)", strings.Join(args, " "), r.err, r.stderr)
		}
		return r.stdout
	}
	contains := func(out string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("output lacks %q:\n%s", w, out)
			}
		}
	}
	contains(ok("bos", "sessiontemplates", "create", "-f", file), "sessiontemplate compute created")
	contains(ok("bos", "sessiontemplates", "list"), "NAME", "compute", "the compute image")
	if out := ok("bos", "sessiontemplates", "list", "-tenant", "vcluster-a"); strings.Contains(out, "compute") {
		t.Errorf("a tenant lists no tenant's template:\n%s", out)
	}
	var tp orchestrator.Template
	hmsJSON(t, e, &tp, "bos", "sessiontemplates", "describe", "compute")
	if tp.Name != "compute" || len(tp.BootSets["c"].NodeList) != 2 {
		t.Errorf("described template %+v", tp)
	}
	contains(ok("bos", "sessiontemplates", "describe", "compute", "-o", "yaml"), "node_list:")

	var sess orchestrator.Session
	hmsJSON(t, e, &sess, "bos", "sessions", "create", "--template", "compute", "--operation", "boot",
		"--limit", "x3000c0s1b0n0", "-name", "s1")
	if sess.Name != "s1" || sess.Operation != "boot" || sess.Limit != "x3000c0s1b0n0" {
		t.Errorf("created session %+v", sess)
	}
	contains(ok("bos", "sessions", "list", "-o", "wide"), "s1", "boot", "compute", "LIMIT")
	contains(ok("bos", "sessions", "describe", "s1"), "template_name: compute")
	contains(ok("bos", "sessions", "status", "s1"), "Session s1:", "Nodes by phase/status:")
	// A component of its own (the session's may not be set up yet).
	req, err := http.NewRequestWithContext(t.Context(), "PUT", urls["bos"]+"/v2/components/x3000c0s3b0n0",
		strings.NewReader(`{"enabled":false,"error":"held for repair"}`))
	mustOK(t, err)
	resp, err := http.DefaultClient.Do(req)
	mustOK(t, err)
	resp.Body.Close()
	var comps []orchestrator.Component
	hmsJSON(t, e, &comps, "bos", "components", "list", "x3000c0s3b0n0")
	if len(comps) != 1 || comps[0].Error != "held for repair" {
		t.Errorf("components %+v", comps)
	}
	contains(ok("bos", "components", "list", "-o", "wide", "-enabled", "false"), "ID", "LAST-ACTION", "held for repair")
	contains(ok("bos", "components", "describe", "x3000c0s3b0n0"), "error: held for repair")

	bad := []struct {
		args []string
		code int
		want string
	}{
		{args: []string{"bos", "sessions", "create", "-template", "compute"}, code: 2, want: "-template and -operation are required"},
		{args: []string{"bos", "sessions", "create", "-template", "nope", "-operation", "boot"}, code: 1, want: "could not be found"},
		{args: []string{"bos", "sessiontemplates", "create"}, code: 2, want: "-f FILE is required"},
		{args: []string{"bos", "sessions"}, code: 2, want: "bos sessions: want one of list, describe, create, status, delete"},
		{args: []string{"bos", "nodes"}, code: 2, want: `bos: unknown "nodes", want one of sessiontemplates, sessions, components`},
		{args: []string{"bos", "sessions", "describe", "nope"}, code: 1, want: "could not be found"},
	}
	for _, b := range bad {
		r := hms(t, e, b.args...)
		if r.code() != b.code || r.err == nil || !strings.Contains(r.err.Error(), b.want) {
			t.Errorf("hms %s: code %d err %v, want %d and %q", strings.Join(b.args, " "), r.code(), r.err, b.code, b.want)
		}
	}

	// Slurm's RebootProgram: a staged node is handed to its session, a node
	// with nothing staged runs -otherwise, an unknown one fails.
	ok("bos", "sessions", "create", "-template", "compute", "-operation", "reboot", "-stage", "-name", "st")
	req, err = http.NewRequestWithContext(t.Context(), "PUT", urls["bos"]+"/v2/components/x3000c0s2b0n0",
		strings.NewReader(`{"staged_state":{"session":"st"}}`))
	mustOK(t, err)
	resp, err = http.DefaultClient.Do(req)
	mustOK(t, err)
	resp.Body.Close()
	xfile := filepath.Join(t.TempDir(), "xname")
	mustOK(t, os.WriteFile(xfile, []byte("x3000c0s2b0n0\n"), 0o600))
	contains(ok("bos", "applystaged", "-xname-file", xfile, "-otherwise", "echo plain reboot"), "x3000c0s2b0n0 succeeded")
	if out := ok("bos", "applystaged", "x3000c0s3b0n0", "-otherwise", "echo plain reboot"); out != "x3000c0s3b0n0 ignored\nplain reboot\n" {
		t.Errorf("applystaged with nothing staged: %q", out)
	}
	if r := hms(t, e, "bos", "applystaged", "x9000c0s0b0n0"); r.code() != 1 || !strings.Contains(r.stdout, "x9000c0s0b0n0 failed") {
		t.Errorf("applystaged of an unknown node: code %d, %q", r.code(), r.stdout)
	}

	contains(ok("bos", "sessions", "delete", "s1"), "session s1 deleted")
	contains(ok("bos", "sessiontemplates", "delete", "compute"), "sessiontemplate compute deleted")
	if r := hms(t, e, "bos", "sessiontemplates", "list"); r.err != nil || !strings.Contains(r.stderr, "no session templates") {
		t.Errorf("list after delete: %q %q %v", r.stdout, r.stderr, r.err)
	}
}
