package orchestrator

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestConfigCommand: with -config-command, booted nodes are configuring
// until the command has run over their batch (once for both nodes, with
// the configuration and the xnames): exit 0 makes them stable; a failing
// run fails them with its exit status and output; a run past the timeout
// is killed and fails them; an Ansible PLAY RECAP decides per node.
func TestConfigCommand(t *testing.T) {
	script, err := filepath.Abs("testdata/configure.sh")
	if err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(t.TempDir(), "runs")
	// Runs time out when the test closes timeout; the runs after get a
	// fresh one.
	var mu sync.Mutex
	timeout := make(chan time.Time)
	e := newEnvWith(t, func(cfg *DaemonConfig) {
		cfg.CFSURL = ""
		cfg.Command = &CommandConfig{Command: "sh " + quote(script) + " " + quote(logFile) + " {config} {nodes}", Timeout: time.Minute}
		cfg.After = func(time.Duration) <-chan time.Time { mu.Lock(); defer mu.Unlock(); return timeout }
	}, n1, n2)
	svc := e.daemon.svc
	for _, config := range []string{"good", "bad", "hang", "recap"} {
		body := `{"cfs":{"configuration":"` + config + `"},"boot_sets":{"c":{"path":"` + e.cluster.manifestURL("img1") +
			`","type":"s3","node_list":["` + n1 + `","` + n2 + `"]}}}`
		if code := e.call("PUT", "/v2/sessiontemplates/"+config, body, nil); code != 200 {
			t.Fatal(code)
		}
	}

	e.session(`{"name":"s1","operation":"boot","template_name":"good"}`)
	e.reconcile()
	e.wantStatuses("powered on", StatusPowerOnCalled, StatusPowerOnCalled)
	e.clock.Advance(20 * time.Second)
	e.reconcile()
	e.wantStatuses("booted, configuring", StatusConfiguring, StatusConfiguring)
	svc.cmd.wait()
	e.reconcile()
	e.wantStatuses("configured", StatusStable, StatusStable)
	runs, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	both := n1 + "," + n2
	if d := cmp.Diff("good "+both+" good "+both+"\n", string(runs)); d != "" {
		t.Errorf("runs (-want +got):\n%s", d)
	}

	e.session(`{"name":"s2","operation":"boot","template_name":"bad"}`)
	e.reconcile()
	e.wantStatuses("booted already, configuring", StatusConfiguring, StatusConfiguring)
	svc.cmd.wait()
	e.reconcile()
	e.wantStatuses("configuration failed", StatusFailed, StatusFailed)
	want := "configuration command for bad: exit status 2: fatal: [" + both + "]: UNREACHABLE!"
	if c := e.component(n1); c.Enabled || c.Error != want {
		t.Errorf("n1 after a failed run: enabled %v, error %q, want %q", c.Enabled, c.Error, want)
	}

	e.session(`{"name":"s3","operation":"boot","template_name":"hang"}`)
	e.reconcile()
	e.wantStatuses("hanging", StatusConfiguring, StatusConfiguring)
	mu.Lock()
	close(timeout)
	mu.Unlock()
	svc.cmd.wait()
	mu.Lock()
	timeout = make(chan time.Time)
	mu.Unlock()
	e.reconcile()
	e.wantStatuses("timed out", StatusFailed, StatusFailed)
	if c := e.component(n2); !strings.HasPrefix(c.Error, "configuration command for hang: timed out after 1m0s") {
		t.Errorf("n2 after a run past its timeout: error %q", c.Error)
	}
	if s := e.sessionState("s3"); s.Status.Status != SessionComplete {
		t.Errorf("session s3: %+v", s.Status)
	}

	e.session(`{"name":"s4","operation":"boot","template_name":"recap"}`)
	e.reconcile()
	svc.cmd.wait()
	e.reconcile()
	e.wantStatuses("per host from the PLAY RECAP", StatusStable, StatusFailed)
	if c := e.component(n2); !strings.HasPrefix(c.Error, "configuration command for recap: exit status 4: PLAY RECAP") {
		t.Errorf("n2, unreachable in the recap: error %q", c.Error)
	}
}

func TestTail(t *testing.T) {
	tl := &tail{max: 4}
	for _, s := range []string{"ab", "cdef", "g"} {
		if _, err := tl.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	if got := tl.String(); got != "...defg" {
		t.Errorf("tail %q, want ...defg", got)
	}
}

// TestConfigCommandRefusesUnsafeNames: a configuration name or xname that
// would need quoting never reaches the shell, quoted or not; the nodes
// fail with why.
func TestConfigCommandRefusesUnsafeNames(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	r := newCommandRunner(CommandConfig{Command: "touch " + quote(marker) + `; echo "config={config}"`},
		func(time.Duration) <-chan time.Time { return nil }, func() {}, slog.New(slog.DiscardHandler))
	for _, config := range []string{"$(id)", "a b", `x"y`} {
		r.start(t.Context(), []string{"x1000c0s0b0n0"}, config, 1)
		r.wait()
		got, _ := r.CFSComponents(t.Context(), []string{"x1000c0s0b0n0"})
		if len(got) != 1 || got[0].ConfigurationStatus != CFSFailed || !strings.Contains(got[0].Error, "not run") {
			t.Errorf("configuration %q: %+v, want failed, not run", config, got)
		}
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("the command ran for an unsafe name (%v)", err)
	}
}
