package orchestrator

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/testpeer"
)

// TestConfigCommandResumes: -config-command's runs are in bos's database.
// A batch that ended before bos restarted keeps its per-node results (no
// second run); one that bos's stop interrupted runs again after the
// restart, then completes.
func TestConfigCommandResumes(t *testing.T) { pg.EachDB(t, testConfigCommandResumes) }

func testConfigCommandResumes(t *testing.T, db testpeer.DB) {
	script, err := filepath.Abs("testdata/configure.sh")
	if err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(t.TempDir(), "runs")
	e := newEnvOn(t, db, func(cfg *DaemonConfig) {
		cfg.CFSURL = ""
		cfg.Command = &CommandConfig{Command: "sh " + quote(script) + " " + quote(logFile) + " {config} {nodes}"}
	}, n1, n2)
	e.configTemplates("recap", "slow")
	runs := func() []string {
		t.Helper()
		b, err := os.ReadFile(logFile)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			out = append(out, strings.Fields(l)[0])
		}
		return out
	}

	e.session(`{"name":"s1","operation":"boot","template_name":"recap"}`)
	e.reconcile()
	e.clock.Advance(20 * time.Second)
	e.reconcile()
	e.daemon.svc.cmd.wait()
	e.wantStatuses("run ended, not yet read", StatusConfiguring, StatusConfiguring)
	e.restart()
	e.reconcile()
	e.wantStatuses("after the restart", StatusStable, StatusFailed)
	if c := e.component(n2); !strings.HasPrefix(c.Error, "configuration command for recap: exit status 4: PLAY RECAP") {
		t.Errorf("n2 after the restart: error %q", c.Error)
	}

	fifo := logFile + ".fifo"
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(t.Context())
	e.session(`{"name":"s2","operation":"boot","template_name":"slow"}`)
	if err := e.daemon.svc.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	e.wantStatuses("slow run started", StatusConfiguring, StatusConfiguring)
	f, err := os.Open(fifo) // returns once the run has begun
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	stop() // bos stops: the run is killed
	e.daemon.svc.cmd.wait()
	if err := os.Remove(fifo); err != nil { // the next run of slow ends at once
		t.Fatal(err)
	}
	e.restart()
	e.reconcile()
	e.daemon.svc.cmd.wait()
	e.reconcile()
	e.wantStatuses("interrupted run run again", StatusStable, StatusStable)
	if d := cmp.Diff([]string{"recap", "slow", "slow"}, runs()); d != "" {
		t.Errorf("runs (-want +got):\n%s", d)
	}
}

// TestConfigCommandAfterApplyStaged: a node rebuilt through applystaged
// is configured again, even with the configuration it was configured with
// before (its new image has none of it).
func TestConfigCommandAfterApplyStaged(t *testing.T) {
	script, err := filepath.Abs("testdata/configure.sh")
	if err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(t.TempDir(), "runs")
	e := newEnvWith(t, func(cfg *DaemonConfig) {
		cfg.CFSURL = ""
		cfg.Command = &CommandConfig{Command: "sh " + quote(script) + " " + quote(logFile) + " {config} {node}"}
	}, n1, n2)
	e.configTemplates("good")
	body := `{"cfs":{"configuration":"good"},"boot_sets":{"c":{"path":"` + e.cluster.manifestURL("img2") +
		`","type":"s3","node_list":["` + n1 + `","` + n2 + `"]}}}`
	if code := e.call("PUT", "/v2/sessiontemplates/good2", body, nil); code != 200 {
		t.Fatal(code)
	}
	e.session(`{"name":"s1","operation":"boot","template_name":"good"}`)
	e.session(`{"name":"st","operation":"boot","template_name":"good2","stage":true}`)
	settle := func() {
		for range 3 { // power on, boot and configure, take the result
			e.reconcile()
			e.daemon.svc.cmd.wait()
			e.clock.Advance(20 * time.Second)
		}
	}
	settle()
	e.wantStatuses("configured", StatusStable, StatusStable)
	if code := e.call("POST", "/v2/applystaged", `{"xnames":["`+n1+`"]}`, nil); code != 200 {
		t.Fatalf("applystaged: %d", code)
	}
	for range 2 {
		settle()
	}
	e.wantStatuses("n1 rebuilt", StatusStable, StatusStable)
	b, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	// The first two runs (one per node, -config-parallel) finish in either
	// order; the third is n1's again, after its rebuild.
	got := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(got) == 3 {
		slices.Sort(got[:2])
	}
	want := []string{"good " + n1 + " good " + n1, "good " + n2 + " good " + n2, "good " + n1 + " good " + n1}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("runs (-want +got):\n%s", d)
	}
	if c := e.component(n1); !strings.Contains(c.ActualState.BootArtifacts.Kernel, "img2") {
		t.Errorf("n1 after applystaged runs %q", c.ActualState.BootArtifacts.Kernel)
	}
}
