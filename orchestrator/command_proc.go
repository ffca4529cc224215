package orchestrator

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// runEnv is the variable that carries a run's token into every process of
// the run: a restarted bos knows its own processes by it.
const runEnv = "BOS_CONFIG_RUN"

// wrap is the shell program that runs line: in the background of a shell
// that, told to end (SIGTERM, which Linux sends it when bos dies: see
// procAttr), kills its whole process group. Linux signals only the child
// of bos that way, never what the child started (a playbook's own
// processes), which the trap reaches.
func wrap(line string) string {
	return "trap 'kill -s KILL 0' TERM\n{\n" + line + "\n} &\nwait $!\n"
}

// newToken names one run ($BOS_CONFIG_RUN).
func newToken() string { return rand.Text() }

// execRun runs the configuration command's shell program for the nodes of
// run gen in a process group of its own, recording the group and token
// (for a restarted bos to kill what a killed one left running) once it
// has started; ctx ending kills the group.
func (r *commandRunner) execRun(ctx context.Context, ids []string, gen uint64, line string, env []string, stdout, stderr io.Writer) error {
	token := newToken()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", wrap(line))
	cmd.Env = append(append(cmd.Environ(), env...), runEnv+"="+token)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = procAttr()
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	// Linux signals the child when the thread that started it ends, not
	// the process (PR_SET_PDEATHSIG): keep this one until the child ends.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cmd.Start(); err != nil {
		return err
	}
	rows := make([]configRun, len(ids))
	for i, id := range ids {
		rows[i] = configRun{node: id, gen: gen, pid: cmd.Process.Pid, token: token}
	}
	if err := r.store.startedConfigRuns(context.WithoutCancel(ctx), rows); err != nil {
		// Only a killed bos needs it: its successor would not kill the run.
		r.log.Warn("configuration_run_not_stored", "pid", cmd.Process.Pid, "err", err)
	}
	return cmd.Wait()
}

// killOrphans kills process group pgid, left running by a bos that was
// killed during run token, if it is still ours: one of its processes has
// the token in its environment. (A PID is not reused while its group has
// members, but once they are all gone the number may come back as an
// unrelated group.) It returns how many of the group's processes were
// found to be the run's.
func killOrphans(pgid int, token string) (int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0, fmt.Errorf("look for the processes of configuration run %d: %w", pgid, err)
	}
	mark := []byte(runEnv + "=" + token + "\x00")
	found := 0
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || processGroup(pid) != pgid {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err == nil && (bytes.HasPrefix(env, mark) || bytes.Contains(env, append([]byte{0}, mark...))) {
			found++
		}
	}
	if found > 0 {
		if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && err != syscall.ESRCH {
			return found, fmt.Errorf("kill configuration run %d: %w", pgid, err)
		}
	}
	return found, nil
}

// processGroup is the process group of pid from /proc/<pid>/stat (-1 when
// it cannot be read). The command name, field 2, is in parentheses and
// may hold spaces; the group is the third field after it.
func processGroup(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 3 {
		return -1
	}
	g, err := strconv.Atoi(f[2])
	if err != nil {
		return -1
	}
	return g
}
