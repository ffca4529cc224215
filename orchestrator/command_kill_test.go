package orchestrator

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// childDirEnv tells the test binary, re-executed, to be the bos of
// TestConfigCommandDiesWithBos (TestConfigCommandChild), on that directory.
const childDirEnv = "HMS_BOS_TEST_CHILD_DIR"

// lingerConfig is bos's configuration that runs testdata/linger.sh over dir.
func lingerConfig(t testing.TB, dir string) func(*DaemonConfig) {
	t.Helper()
	script, err := filepath.Abs("testdata/linger.sh")
	if err != nil {
		t.Fatal(err)
	}
	return func(cfg *DaemonConfig) {
		cfg.CFSURL = ""
		cfg.Command = &CommandConfig{Command: "sh " + quote(script) + " " + quote(dir) + " {nodes}"}
	}
}

// holdFIFO makes dir/hold, which linger.sh holds open for writing while
// any process of its run lives.
func holdFIFO(t *testing.T, dir string) string {
	t.Helper()
	fifo := filepath.Join(dir, "hold")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	return fifo
}

// openHold opens the FIFO for reading once a run holds it, or fails when
// exited closes first (the run never started).
func openHold(t *testing.T, fifo string, exited <-chan error, out *bytes.Buffer) *os.File {
	t.Helper()
	opened := make(chan *os.File, 1)
	go func() {
		f, err := os.Open(fifo) // returns once a writer has it open
		if err != nil {
			t.Error(err)
		}
		opened <- f
	}()
	select {
	case f := <-opened:
		return f
	case err := <-exited:
		// Let the open return, then fail.
		if w, werr := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); werr == nil {
			w.Close()
		}
		if f := <-opened; f != nil {
			f.Close()
		}
		t.Fatalf("bos ended (%v) before its configuration command ran:\n%s", err, out)
	}
	return nil
}

// waitGone reads the FIFO to its end: every process of the run that held
// it has died. The deadline only turns a run that never ends into a
// failure instead of a hung test.
func waitGone(t *testing.T, hold *os.File, what string) {
	t.Helper()
	defer hold.Close()
	if err := hold.SetReadDeadline(time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(hold); err != nil {
		t.Fatalf("%s: the configuration command still runs: %v", what, err)
	}
}

// TestConfigCommandDiesWithBos: a bos killed with SIGKILL takes its
// -config-command run with it, the processes the command started
// included; the restarted bos takes the run's nodes as pending, to run
// their batch again.
func TestConfigCommandDiesWithBos(t *testing.T) {
	dir := t.TempDir()
	fifo := holdFIFO(t, dir)
	var out bytes.Buffer
	child := exec.Command(os.Args[0], "-test.run=^TestConfigCommandChild$")
	child.Env = append(os.Environ(), childDirEnv+"="+dir)
	child.Stdout, child.Stderr = &out, &out
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	t.Cleanup(func() { stdin.Close(); _ = child.Process.Kill() })
	hold := openHold(t, fifo, exited, &out)

	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	waitGone(t, hold, "bos was killed")

	e := newEnvIn(t, dir, lingerConfig(t, dir), n1, n2)
	got, err := e.daemon.svc.cmd.CFSComponents(t.Context(), []string{n1, n2})
	if err != nil {
		t.Fatal(err)
	}
	want := []CFSComponent{{ID: n1, DesiredConfig: "linger", ConfigurationStatus: CFSPending},
		{ID: n2, DesiredConfig: "linger", ConfigurationStatus: CFSPending}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("after the restart (-want +got):\n%s", d)
	}
	// The killed bos's run is the first line (linger.sh notes it before it
	// opens the FIFO the test waited on); a line after it would be the
	// restarted bos running the pending batch again, as it is to.
	b, err := os.ReadFile(filepath.Join(dir, "runs"))
	if first, _, _ := strings.Cut(string(b), "\n"); err != nil || first != n1+","+n2 {
		t.Errorf("runs %q, %v: want first the one run the killed bos started", b, err)
	}
}

// TestConfigCommandChild is the bos of TestConfigCommandDiesWithBos, in a
// process of its own: it boots n1 and n2 and starts configuring them with
// linger.sh, then waits to be killed.
func TestConfigCommandChild(t *testing.T) {
	dir := os.Getenv(childDirEnv)
	if dir == "" {
		t.Skip("the bos that TestConfigCommandDiesWithBos starts and kills")
	}
	e := newEnvIn(t, dir, lingerConfig(t, dir), n1, n2)
	e.configTemplates("linger")
	e.session(`{"name":"s1","operation":"boot","template_name":"linger"}`)
	e.reconcile()
	e.clock.Advance(20 * time.Second)
	e.reconcile()
	e.wantStatuses("configuring", StatusConfiguring, StatusConfiguring)
	_, _ = io.Copy(io.Discard, os.Stdin) // until the test kills this process
}

// TestConfigCommandOrphansKilled: a run a killed bos left running (its
// shell did not take the group down with it) is killed by the next bos
// before its batch runs again; a process group whose processes do not
// carry the run's token is not the run (its number was reused) and is
// left alone.
func TestConfigCommandOrphansKilled(t *testing.T) {
	dir := t.TempDir()
	script, err := filepath.Abs("testdata/linger.sh")
	if err != nil {
		t.Fatal(err)
	}
	// start runs linger.sh over sub as bos would have, token in its
	// environment, without the shell that ends the group with bos.
	start := func(sub, token string) (*exec.Cmd, *os.File) {
		d := filepath.Join(dir, sub)
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		fifo := holdFIFO(t, d)
		var out bytes.Buffer
		cmd := exec.Command("/bin/sh", script, d)
		cmd.Env = append(os.Environ(), runEnv+"="+token, "BOS_NODES="+sub)
		cmd.Stdout, cmd.Stderr = &out, &out
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
		return cmd, openHold(t, fifo, exited, &out)
	}
	orphan, orphanHold := start("orphan", "token-a")
	other, otherHold := start("other", "token-b")
	defer otherHold.Close()

	store, err := OpenStore(t.Context(), filepath.Join(dir, "bos.db"))
	if err != nil {
		t.Fatal(err)
	}
	err = store.putConfigRuns(t.Context(), []configRun{
		{node: n1, config: "linger", status: running, gen: 1, pid: orphan.Process.Pid, token: "token-a"},
		{node: n2, config: "linger", status: running, gen: 1, pid: other.Process.Pid, token: "token-c"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}

	newEnvIn(t, dir, lingerConfig(t, dir), n1, n2)
	waitGone(t, orphanHold, "bos restarted")
	if !alive(other.Process.Pid) {
		t.Errorf("bos killed process group %d, which does not carry its run's token", other.Process.Pid)
	}
}

// alive reports whether pid is a process that has not ended (a zombie
// has).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	return len(f) > 0 && f[0] != "Z"
}
