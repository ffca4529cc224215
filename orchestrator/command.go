package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// CommandConfig is the configuration step without CFS (-config-command):
// a site command run by /bin/sh -c for each batch of nodes that booted
// their image, with {nodes} (comma-separated xnames) and {config} (the
// configuration's name) replaced, shell-quoted; a command naming {node}
// runs once per node instead. It also finds the same values in
// $BOS_NODES and $BOS_CONFIGURATION. Exit status 0 makes every node of the
// run configured; any other, or the timeout, makes them failed with the
// command's output (its last outputTail bytes) as their error; an Ansible
// PLAY RECAP on its standard output decides for the nodes it names.
type CommandConfig struct {
	// Command is the shell command line.
	Command string
	// Timeout ends a run that takes longer (its process group is killed)
	// [30 min].
	Timeout time.Duration
	// Parallel is how many runs go at once [4].
	Parallel int
}

// outputTail bounds the output kept of a failed run.
const outputTail = 2048

// commandRunner is a Configurer that runs CommandConfig.Command. It keeps
// what it ran in memory: a restarted bos runs the command again for the
// nodes it was configuring (site commands such as ansible-playbook are
// meant to be idempotent).
type commandRunner struct {
	cfg   CommandConfig
	after func(time.Duration) <-chan time.Time
	wake  func()
	log   *slog.Logger
	sem   chan struct{}
	wg    sync.WaitGroup

	mu   sync.Mutex
	runs map[string]CFSComponent // by node: the configuration asked for, its status, a failure's output
	// gen numbers the runs; gens holds, by node, the run whose result may
	// still be written back (a run outlived by a new session's is not).
	gen  uint64
	gens map[string]uint64
}

func newCommandRunner(cfg CommandConfig, after func(time.Duration) <-chan time.Time, wake func(), log *slog.Logger) *commandRunner {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Minute
	}
	if cfg.Parallel <= 0 {
		cfg.Parallel = 4
	}
	return &commandRunner{cfg: cfg, after: after, wake: wake, log: log, sem: make(chan struct{}, cfg.Parallel),
		runs: map[string]CFSComponent{}, gens: map[string]uint64{}}
}

// CFSComponents answers what the runner holds of the nodes, as CFS would.
func (r *commandRunner) CFSComponents(_ context.Context, ids []string) ([]CFSComponent, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []CFSComponent
	for _, id := range ids {
		if c, ok := r.runs[id]; ok {
			out = append(out, c)
		}
	}
	return out, nil
}

// SetDesiredConfig records the nodes' configuration as pending; it runs
// once they have booted (start).
func (r *commandRunner) SetDesiredConfig(_ context.Context, ids []string, config string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range ids {
		r.runs[id] = CFSComponent{ID: id, DesiredConfig: config, ConfigurationStatus: CFSPending}
		delete(r.gens, id)
	}
	return nil
}

// start runs the command for those of ids not already running or done with
// config, in the background (batches of at most batch nodes); each run's
// end wakes the operators.
func (r *commandRunner) start(ctx context.Context, ids []string, config string, batch int) {
	var todo []string
	r.mu.Lock()
	r.gen++
	gen := r.gen
	for _, id := range ids {
		if c, ok := r.runs[id]; ok && c.DesiredConfig == config && c.ConfigurationStatus != CFSPending {
			continue
		}
		r.runs[id] = CFSComponent{ID: id, DesiredConfig: config, ConfigurationStatus: running}
		r.gens[id] = gen
		todo = append(todo, id)
	}
	r.mu.Unlock()
	if strings.Contains(r.cfg.Command, "{node}") || batch <= 0 {
		batch = 1
	}
	for part := range slices.Chunk(todo, batch) {
		r.wg.Go(func() {
			select {
			case r.sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			defer func() { <-r.sem }()
			status, msg, hosts := r.run(ctx, part, config)
			r.mu.Lock()
			for _, id := range part {
				if r.gens[id] == gen {
					st, m := status, msg
					if ok, named := hosts[id]; named {
						st, m = perHost(ok, config, msg)
					}
					r.runs[id] = CFSComponent{ID: id, DesiredConfig: config, ConfigurationStatus: st, Error: m}
				}
			}
			r.mu.Unlock()
			r.wake()
		})
	}
}

// running is a run's status while the command runs (CFS's own word for
// it is pending, which here means not started yet).
const running = "running"

// forget drops what ran for the nodes (a new session configures them anew).
func (r *commandRunner) forget(ids []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range ids {
		delete(r.runs, id)
		delete(r.gens, id)
	}
}

// wait returns once every run has ended (they end with ctx).
func (r *commandRunner) wait() { r.wg.Wait() }

var errTimedOut = errors.New("timed out")

// run runs the command once and returns configured, or failed with why,
// and the hosts an Ansible PLAY RECAP on its standard output names (true:
// none of its tasks failed and it was reachable).
func (r *commandRunner) run(ctx context.Context, ids []string, config string) (string, string, map[string]bool) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-r.after(r.cfg.Timeout):
			cancel(errTimedOut)
		case <-ctx.Done():
		}
	}()
	if bad, ok := unsafeWord(append([]string{config}, ids...)); ok {
		// Quoting makes a word safe only where the site left the placeholder
		// unquoted; a name that needs no quoting is safe anywhere.
		return CFSFailed, fmt.Sprintf("configuration command not run: %q may hold only letters, digits, '.', '_', ':' and '-'", bad), nil
	}
	nodes := strings.Join(ids, ",")
	line := strings.NewReplacer("{nodes}", quote(nodes), "{node}", quote(nodes), "{config}", quote(config)).Replace(r.cfg.Command)
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", line)
	cmd.Env = append(cmd.Environ(), "BOS_NODES="+nodes, "BOS_CONFIGURATION="+config)
	out, rc := &tail{max: outputTail}, &recap{hosts: map[string]bool{}}
	cmd.Stdout, cmd.Stderr = io.MultiWriter(out, rc), out
	// Its own process group, so a timeout kills what the shell started too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	switch {
	case err == nil:
		r.log.Info("configuration_command_done", "configuration", config, "nodes", len(ids))
		return CFSConfigured, "", rc.hosts
	case errors.Is(context.Cause(ctx), errTimedOut):
		err = fmt.Errorf("timed out after %s", r.cfg.Timeout)
		rc.hosts = nil // a recap cut short says nothing
	}
	r.log.Warn("configuration_command_failed", "configuration", config, "nodes", len(ids), "err", err)
	msg := fmt.Sprintf("configuration command for %s: %v", config, err)
	if o := strings.TrimSpace(out.String()); o != "" {
		msg += ": " + o
	}
	return CFSFailed, msg, rc.hosts
}

// perHost is a node's outcome from its PLAY RECAP line: configured when
// its tasks went through, whatever the run's exit status (Ansible exits
// non-zero when any host failed); else failed with the run's error.
func perHost(ok bool, config, msg string) (string, string) {
	switch {
	case ok:
		return CFSConfigured, ""
	case msg == "":
		return CFSFailed, fmt.Sprintf("configuration command for %s: failed or unreachable in its PLAY RECAP", config)
	}
	return CFSFailed, msg
}

// recap reads Ansible's PLAY RECAP: after a line starting "PLAY RECAP",
// lines "HOST : ok=3 changed=1 unreachable=0 failed=0 ...".
type recap struct {
	mu    sync.Mutex
	line  []byte
	in    bool
	hosts map[string]bool
}

func (p *recap) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range b {
		switch {
		case c == '\n':
			p.parse(string(p.line))
			p.line = p.line[:0]
		case len(p.line) < 4096:
			p.line = append(p.line, c)
		}
	}
	return len(b), nil
}

func (p *recap) parse(line string) {
	line = strings.TrimSpace(line)
	if strings.HasPrefix(line, "PLAY RECAP") {
		p.in = true
		return
	}
	host, counts, found := strings.Cut(line, ":")
	host = strings.TrimSpace(host)
	if !p.in || !found || host == "" || strings.ContainsAny(host, " \t") {
		return
	}
	ok, seen := true, false
	for _, f := range strings.Fields(counts) {
		k, v, _ := strings.Cut(f, "=")
		if k == "failed" || k == "unreachable" {
			seen = true
			ok = ok && v == "0"
		}
	}
	if seen {
		p.hosts[host] = ok
	}
}

// quote makes s one word for /bin/sh.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// unsafeWord returns the first of words that holds anything but letters,
// digits and . _ : - (or is empty): such a word never reaches the shell,
// quoted or not.
func unsafeWord(words []string) (string, bool) {
	for _, w := range words {
		if w == "" || strings.IndexFunc(w, func(c rune) bool {
			return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._:-", c))
		}) >= 0 {
			return w, true
		}
	}
	return "", false
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
	cut bool
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b, t.cut = slices.Clone(t.b[len(t.b)-t.max:]), true
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cut {
		return "..." + string(t.b)
	}
	return string(t.b)
}

// startConfigs runs the configuration command for the components the
// status operator moved to configuring (they booted their image), one run
// per configuration and batch of max_component_batch_size.
func (s *Service) startConfigs(ctx context.Context) error {
	if s.cmd == nil {
		return nil
	}
	groups := map[string][]string{}
	s.mu.Lock()
	for id, c := range s.comps {
		if c.Enabled && c.Status.StatusOverride == "" && c.Status.Phase == PhaseConfiguring && c.DesiredState.Configuration != "" {
			groups[c.DesiredState.Configuration] = append(groups[c.DesiredState.Configuration], id)
		}
	}
	s.mu.Unlock()
	batch := s.options().BatchSize
	for _, config := range slices.Sorted(maps.Keys(groups)) {
		ids := groups[config]
		slices.Sort(ids)
		s.cmd.start(ctx, ids, config, batch)
	}
	return nil
}
