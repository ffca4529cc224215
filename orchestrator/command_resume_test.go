package orchestrator

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestConfigCommandResumes: -config-command's runs are in bos's database.
// A batch that ended before bos restarted keeps its per-node results (no
// second run); one that bos's stop interrupted runs again after the
// restart, then completes.
func TestConfigCommandResumes(t *testing.T) {
	script, err := filepath.Abs("testdata/configure.sh")
	if err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(t.TempDir(), "runs")
	e := newEnvWith(t, func(cfg *DaemonConfig) {
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
