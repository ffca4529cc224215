package ctl

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/nodes/wire"
)

// fakeNodes speaks the nodes daemon's contract: POST /nodes/v1/apply
// answers a canned plan (or a problem), GET /nodes/v1/bootprofiles/{name}
// knows the profiles in profiles.
type fakeNodes struct {
	t        *testing.T
	plan     []byte
	refuse   bool // answer a 400 problem instead of the plan
	profiles map[string]bool

	mu   sync.Mutex
	reqs []wire.ApplyRequest
	gets []string
}

func (f *fakeNodes) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /nodes/v1/apply", func(w http.ResponseWriter, r *http.Request) {
		var req wire.ApplyRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			f.t.Errorf("apply body: %v", err)
		}
		f.reqs = append(f.reqs, req)
		if f.refuse {
			problem.Write(w, r, nil, problem.Invalidf("ComputeNode x1000c0s0b0n0: role Toaster is not an HSM role"))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(f.plan)
	})
	mux.HandleFunc("GET /nodes/v1/bootprofiles/{name}", func(w http.ResponseWriter, r *http.Request) {
		f.gets = append(f.gets, r.PathValue("name"))
		if !f.profiles[r.PathValue("name")] {
			problem.Write(w, r, nil, problem.NotFoundf("no such boot profile"))
			return
		}
		json.NewEncoder(w).Encode(wire.BootProfile{Name: r.PathValue("name")})
	})
	mux.ServeHTTP(w, r)
}

func newFakeNodes(t *testing.T) (*fakeNodes, func(string) string) {
	t.Helper()
	plan, err := os.ReadFile(filepath.Join("testdata", "apply", "plan.json"))
	mustOK(t, err)
	f := &fakeNodes{t: t, plan: plan, profiles: map[string]bool{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	home := t.TempDir()
	return f, func(k string) string {
		switch k {
		case "HOME":
			return home
		case "HMS_NODES_URL":
			return srv.URL
		}
		return ""
	}
}

type applyRun struct {
	stdout, stderr string
	err            error
}

func runApply(t *testing.T, getenv func(string) string, stdin string, args ...string) applyRun {
	t.Helper()
	var out, errb bytes.Buffer
	err := Run(t.Context(), args, Options{Getenv: getenv, Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(stdin)})
	return applyRun{stdout: out.String(), stderr: errb.String(), err: err}
}

const goodFile = "testdata/apply/good.yaml"

// TestApplySends: apply, diff and delete send the file's resources with
// the right flags, and the BMC credentials (apply and diff only), which
// are never printed.
func TestApplySends(t *testing.T) {
	m, errs := readManifest(goodFile, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	want := resources(m.decls)
	secrets := map[string]wire.Credentials{"bmc.yaml": {Username: "root", Password: "s3cr3t-never-shown"}}
	for _, tt := range []struct {
		args []string
		want wire.ApplyRequest
	}{
		{args: []string{"apply", "-f", goodFile}, want: wire.ApplyRequest{Resources: want, Secrets: secrets}},
		{args: []string{"apply", "--dry-run", "-prune", "-f", goodFile}, want: wire.ApplyRequest{Resources: want, Secrets: secrets, DryRun: true, Prune: true}},
		{args: []string{"diff", "-f", goodFile}, want: wire.ApplyRequest{Resources: want, Secrets: secrets, DryRun: true}},
		{args: []string{"delete", "-f", goodFile}, want: wire.ApplyRequest{Resources: want, Delete: true}},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			f, getenv := newFakeNodes(t)
			r := runApply(t, getenv, "", tt.args...)
			if len(f.reqs) != 1 {
				t.Fatalf("%d requests, want 1 (err %v)", len(f.reqs), r.err)
			}
			if diff := cmp.Diff(tt.want, f.reqs[0]); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
			if strings.Contains(r.stdout+r.stderr+r.err.Error(), "s3cr3t") {
				t.Errorf("a credential was printed: %q %q %v", r.stdout, r.stderr, r.err)
			}
		})
	}
}

// TestApplyOutput: the plan as a table (golden), wide, json and yaml; a
// change with an error makes the exit status 1, naming it.
func TestApplyOutput(t *testing.T) {
	f, getenv := newFakeNodes(t)
	var plan wire.Plan
	mustOK(t, json.Unmarshal(f.plan, &plan))
	for _, format := range []string{"table", "wide"} {
		r := runApply(t, getenv, "", "apply", "-f", goodFile, "-o", format)
		golden(t, "plan-"+format+".txt", []byte(r.stdout))
		want := "apply: 1 of 4 changes failed; first ComputeNode x1000c0s9b0n0: hsm DELETE /State/Components/x1000c0s9b0n0: 503 unavailable"
		if r.err == nil || r.err.Error() != want || r.stderr != "" {
			t.Errorf("-o %s: err %v, stderr %q; want %q", format, r.err, r.stderr, want)
		}
	}
	var b bytes.Buffer
	mustOK(t, planText(plan, true)(&b, false))
	golden(t, "plan-colour.txt", b.Bytes())

	r := runApply(t, getenv, "", "diff", "-f", goodFile, "-o", "json")
	var got wire.Plan
	mustOK(t, json.Unmarshal([]byte(r.stdout), &got))
	if len(got.Changes) != 4 || got.Changes[0].Name != "compute" || !got.Applied {
		t.Errorf("-o json: %s", r.stdout)
	}
	r = runApply(t, getenv, "", "diff", "-f", goodFile, "-o", "yaml")
	if !strings.Contains(r.stdout, "- action: update\n") || !strings.Contains(r.stdout, "kernel_url: http://img/vmlinuz-6.6") {
		t.Errorf("-o yaml: %s", r.stdout)
	}
}

// TestApplyRefuses: a bad file, a profile defined nowhere, a bad command
// line: one line per error, nothing sent.
func TestApplyRefuses(t *testing.T) {
	nodeOf := func(profile string) string {
		return "kind: ComputeNode\nxname: x1000c0s0b0n0\nboot_profile: " + profile + "\n"
	}
	for _, tt := range []struct {
		name     string
		args     []string
		stdin    string
		code     int
		err      string
		stderr   string
		profiles map[string]bool
		sent     int
	}{
		{name: "invalid", args: []string{"apply", "-f", "testdata/apply/dup.yaml"}, code: 1,
			err: "apply: testdata/apply/dup.yaml: 4 errors, nothing sent", stderr: "testdata/apply/dup.yaml:5: name compute already used by another BootProfile at testdata/apply/dup.yaml:2\n"},
		{name: "invalid YAML", args: []string{"diff", "-f", "-"}, stdin: "kind: [", code: 2,
			err: "diff: -: 1 errors, nothing sent", stderr: "<stdin>:1: invalid YAML: did not find expected node content\n"},
		{name: "profile nowhere", args: []string{"apply", "-f", "-"}, stdin: nodeOf("gpu"), code: 1,
			err: "apply: -: 1 errors, nothing sent", stderr: "<stdin>:3: boot_profile gpu is defined neither in the file nor on the nodes daemon\n"},
		{name: "profile on the daemon", args: []string{"apply", "-f", "-"}, stdin: nodeOf("gpu"), profiles: map[string]bool{"gpu": true},
			code: 1, sent: 1, err: "apply: 1 of 4 changes failed"},
		{name: "profile pruned", args: []string{"apply", "-prune", "-f", "-"}, stdin: nodeOf("gpu"), profiles: map[string]bool{"gpu": true}, code: 1,
			err: "apply: -: 1 errors, nothing sent", stderr: "<stdin>:3: boot_profile gpu is not defined in the file (with -prune the file must define every profile it uses)\n"},
		{name: "no -f", args: []string{"apply"}, code: 2, err: "apply: want -f FILE, DIR or -"},
		{name: "no prune on delete", args: []string{"delete", "-prune", "-f", goodFile}, code: 2, err: "-prune"},
		{name: "empty", args: []string{"apply", "-f", "-"}, stdin: "---\n", code: 1, err: "apply: - declares no resource"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, getenv := newFakeNodes(t)
			f.profiles = tt.profiles
			r := runApply(t, getenv, tt.stdin, tt.args...)
			if code := cli.ExitCode(r.err); code != tt.code || r.err == nil || !strings.HasPrefix(r.err.Error(), tt.err) && !strings.Contains(r.err.Error(), tt.err) {
				t.Errorf("exit %d, err %v; want %d, %q", cli.ExitCode(r.err), r.err, tt.code, tt.err)
			}
			if tt.stderr != "" && !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("stderr %q, want it to hold %q", r.stderr, tt.stderr)
			}
			if len(f.reqs) != tt.sent {
				t.Errorf("%d applies sent, want %d", len(f.reqs), tt.sent)
			}
		})
	}
}

// TestApplyProblem: the daemon refusing the set (400 problem+json) is a
// failure carrying its detail.
func TestApplyProblem(t *testing.T) {
	f, getenv := newFakeNodes(t)
	f.refuse = true
	r := runApply(t, getenv, "", "apply", "-f", goodFile)
	if r.err == nil || !strings.Contains(r.err.Error(), "400 ComputeNode x1000c0s0b0n0: role Toaster is not an HSM role") || r.stdout != "" {
		t.Errorf("err %v, stdout %q", r.err, r.stdout)
	}
}

// TestUnified: hunks with three lines of context, as diff -u writes them.
func TestUnified(t *testing.T) {
	abc := strings.Split("a b c d e f g h i j k", " ")
	for _, tt := range []struct {
		name string
		a, b []string
		want []string
	}{
		{name: "create", b: []string{"x", "y"}, want: []string{"@@ -0,0 +1,2 @@", "+x", "+y"}},
		{name: "delete", a: []string{"x"}, want: []string{"@@ -1,1 +0,0 @@", "-x"}},
		{name: "same", a: abc, b: abc},
		{name: "two hunks", a: abc, b: strings.Split("a B c d e f g h i j k l", " "), want: []string{
			"@@ -1,5 +1,5 @@", " a", "-b", "+B", " c", " d", " e",
			"@@ -9,3 +9,4 @@", " i", " j", " k", "+l"}},
		{name: "one hunk", a: abc, b: strings.Split("a b c D e f g h i j k", " "), want: []string{
			"@@ -1,7 +1,7 @@", " a", " b", " c", "-d", "+D", " e", " f", " g"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, unified(tt.a, tt.b)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestDiffExitStatus: hms diff exits as kubectl diff does: 0 without
// changes, 1 with changes (printing the plan, no error line), 2 on an
// error.
func TestDiffExitStatus(t *testing.T) {
	f, getenv := newFakeNodes(t)
	f.plan = []byte(`{"changes":[{"kind":"BootProfile","name":"compute","action":"update"}]}`)
	r := runApply(t, getenv, "", "diff", "-f", goodFile)
	if code := cli.ExitCode(r.err); code != 1 || !strings.Contains(r.stdout, "compute") {
		t.Errorf("with changes: exit %d (%v), stdout %q; want 1 and the plan", code, r.err, r.stdout)
	}
	var xe *cli.ExitError
	if !errors.As(r.err, &xe) || xe.Err != nil {
		t.Errorf("with changes: %v, want a silent exit status", r.err)
	}
	f.plan = []byte(`{"changes":[{"kind":"BootProfile","name":"compute","action":"unchanged"}]}`)
	if r := runApply(t, getenv, "", "diff", "-f", goodFile); r.err != nil {
		t.Errorf("without changes: %v, want exit 0", r.err)
	}
	if r := runApply(t, getenv, "", "apply", "-f", goodFile); r.err != nil {
		t.Errorf("apply without changes: %v", r.err)
	}
	f.refuse = true
	r = runApply(t, getenv, "", "diff", "-f", goodFile)
	if code := cli.ExitCode(r.err); code != 2 || !strings.Contains(r.err.Error(), "Toaster") {
		t.Errorf("refused: exit %d (%v), want 2 and the daemon's detail", code, r.err)
	}
	r = runApply(t, func(k string) string {
		if k == "HMS_NODES_URL" {
			return "http://127.0.0.1:1"
		}
		return getenv(k)
	}, "", "diff", "-f", goodFile)
	if code := cli.ExitCode(r.err); code != 2 {
		t.Errorf("daemon unreachable: exit %d (%v), want 2", code, r.err)
	}
}
