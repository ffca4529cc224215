package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// CommandConfig is the configuration step without CFS (-config-command):
// a site command run by /bin/sh -c for each batch of nodes that booted
// their image, with {nodes} (comma-separated xnames) and {config} (the
// configuration's name) replaced, shell-quoted; a command naming {node}
// runs once per node instead. It also finds the same values in
// $BOS_NODES and $BOS_CONFIGURATION, and its run's token in
// $BOS_CONFIG_RUN (see killOrphans). Exit status 0 makes every node of the
// run configured; any other, or the timeout, makes them failed with the
// command's output (its last outputTail bytes) as their error. What
// ansible-playbook prints decides for the nodes it names: the document of
// its json callback, else its PLAY RECAP.
type CommandConfig struct {
	// Command is the shell command line.
	Command string
	// Timeout ends a run that takes longer (its process group is killed)
	// [30 min].
	Timeout time.Duration
	// Parallel is how many runs go at once [4].
	Parallel int
}

// outputTail bounds the output kept of a failed run; jsonMax the json
// callback's document read (decoded as it comes, not kept; a larger one is
// given up: the PLAY RECAP and the exit status decide).
const (
	outputTail = 2048
	jsonMax    = 16 << 20
)

// commandRunner is a Configurer that runs CommandConfig.Command. What it
// ran is in memory and in the store (config_runs): a restarted bos keeps
// the results of the runs that ended, and runs again those it
// interrupted (site commands such as ansible-playbook are meant to be
// idempotent).
type commandRunner struct {
	cfg   CommandConfig
	store *Store
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

func newCommandRunner(cfg CommandConfig, store *Store, after func(time.Duration) <-chan time.Time, wake func(), log *slog.Logger) *commandRunner {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Minute
	}
	if cfg.Parallel <= 0 {
		cfg.Parallel = 4
	}
	return &commandRunner{cfg: cfg, store: store, after: after, wake: wake, log: log, sem: make(chan struct{}, cfg.Parallel),
		runs: map[string]CFSComponent{}, gens: map[string]uint64{}}
}

// load takes over the runs a previous bos recorded: the results of those
// that ended; the nodes of one it interrupted (still running when it
// stopped) are pending again, so their batch runs again, once what a
// killed bos left of it running is killed.
func (r *commandRunner) load(ctx context.Context) error {
	runs, err := r.store.configRuns(ctx)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	interrupted := 0
	groups := map[int]string{}
	for _, c := range runs {
		r.gen = max(r.gen, c.gen)
		if c.status == running {
			c.status = CFSPending
			interrupted++
			if c.pid > 0 {
				groups[c.pid] = c.token
			}
		}
		r.runs[c.node] = CFSComponent{ID: c.node, DesiredConfig: c.config, ConfigurationStatus: c.status, Error: c.err}
	}
	if interrupted > 0 {
		r.log.Info("configuration_runs_interrupted", "nodes", interrupted)
	}
	r.killOrphans(groups)
	return nil
}

// killOrphans kills what is left of the interrupted runs (process group ->
// token) before they run again: a bos that was killed, rather than
// stopped, may have left them running (see procAttr).
func (r *commandRunner) killOrphans(groups map[int]string) {
	for _, pgid := range slices.Sorted(maps.Keys(groups)) {
		n, err := killOrphans(pgid, groups[pgid])
		switch {
		case err != nil:
			r.log.Warn("configuration_run_not_killed", "pid", pgid, "err", err)
		case n > 0:
			r.log.Warn("configuration_run_killed", "pid", pgid, "processes", n)
		}
	}
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
func (r *commandRunner) SetDesiredConfig(ctx context.Context, ids []string, config string) error {
	rows := make([]configRun, len(ids))
	for i, id := range ids {
		rows[i] = configRun{node: id, config: config, status: CFSPending}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.store.putConfigRuns(ctx, rows); err != nil {
		return err
	}
	for _, id := range ids {
		r.runs[id] = CFSComponent{ID: id, DesiredConfig: config, ConfigurationStatus: CFSPending}
		delete(r.gens, id)
	}
	return nil
}

// start runs the command for those of ids not already running or done with
// config, in the background (batches of at most batch nodes); each run's
// end wakes the operators. aliases are the nodes' hostnames (lower-case
// hostname -> xname), for reading Ansible's output.
func (r *commandRunner) start(ctx context.Context, ids []string, config string, batch int, aliases map[string]string) error {
	todo, gen, err := r.claim(ctx, ids, config)
	if err != nil || len(todo) == 0 {
		return err
	}
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
			res := r.run(ctx, part, config, gen)
			if ctx.Err() != nil {
				return // bos stops: the run stays running in the store, and runs again at the next start
			}
			r.finish(ctx, part, config, gen, matchHosts(part, res.hosts, aliases), res)
			r.wake()
		})
	}
	return nil
}

// claim records a new run (generation) over those of ids not already
// running or done with config, and returns them.
func (r *commandRunner) claim(ctx context.Context, ids []string, config string) ([]string, uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	gen := r.gen + 1
	var todo []string
	var rows []configRun
	for _, id := range ids {
		if c, ok := r.runs[id]; ok && c.DesiredConfig == config && c.ConfigurationStatus != CFSPending {
			continue
		}
		todo = append(todo, id)
		rows = append(rows, configRun{node: id, config: config, status: running, gen: gen})
	}
	if len(todo) == 0 {
		return nil, 0, nil
	}
	if err := r.store.putConfigRuns(ctx, rows); err != nil {
		return nil, 0, err
	}
	r.gen = gen
	for _, id := range todo {
		r.runs[id] = CFSComponent{ID: id, DesiredConfig: config, ConfigurationStatus: running}
		r.gens[id] = gen
	}
	return todo, gen, nil
}

// finish records how run gen went for those of its nodes whose newest run
// it still is: per node from hosts (Ansible's report) when it names the
// node, else the run's outcome.
func (r *commandRunner) finish(ctx context.Context, part []string, config string, gen uint64, hosts map[string]hostResult, res runResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var rows []configRun
	for _, id := range part {
		if r.gens[id] != gen {
			continue
		}
		st, msg := res.status, res.msg
		if h, named := hosts[id]; named {
			st, msg = perHost(h, config, res.msg)
		}
		rows = append(rows, configRun{node: id, config: config, status: st, err: msg, gen: gen})
	}
	if err := r.store.endConfigRuns(ctx, rows); err != nil {
		// This bos still acts on the result; a restarted one runs the batch again.
		r.log.Warn("configuration_result_not_stored", "configuration", config, "nodes", len(rows), "err", err)
	}
	for _, c := range rows {
		r.runs[c.node] = CFSComponent{ID: c.node, DesiredConfig: config, ConfigurationStatus: c.status, Error: c.err}
	}
}

// running is a run's status while the command runs (CFS's own word for
// it is pending, which here means not started yet).
const running = "running"

// forget drops what ran for the nodes (a new session configures them anew).
func (r *commandRunner) forget(ctx context.Context, ids []string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.store.deleteConfigRuns(ctx, ids); err != nil {
		return err
	}
	for _, id := range ids {
		delete(r.runs, id)
		delete(r.gens, id)
	}
	return nil
}

// wait returns once every run has ended (they end with ctx).
func (r *commandRunner) wait() { r.wg.Wait() }

var errTimedOut = errors.New("timed out")

// runResult is how one run went: configured, or failed with why; and the
// hosts Ansible's output reports on (nil when it reports none).
type runResult struct {
	status, msg string
	hosts       map[string]hostResult
}

// run runs the command once, as run gen of the nodes ids.
func (r *commandRunner) run(ctx context.Context, ids []string, config string, gen uint64) runResult {
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
		return runResult{status: CFSFailed, msg: fmt.Sprintf("configuration command not run: %q may hold only letters, digits, '.', '_', ':' and '-'", bad)}
	}
	nodes := strings.Join(ids, ",")
	line := strings.NewReplacer("{nodes}", quote(nodes), "{node}", quote(nodes), "{config}", quote(config)).Replace(r.cfg.Command)
	out, rc, doc := &tail{max: outputTail}, &recap{hosts: map[string]hostResult{}}, newJSONReport(jsonMax)
	err := r.execRun(ctx, ids, gen, line, []string{"BOS_NODES=" + nodes, "BOS_CONFIGURATION=" + config}, io.MultiWriter(out, rc, doc), out)
	hosts, ok := doc.result()
	if !ok {
		hosts = rc.hosts
	}
	switch {
	case err == nil:
		r.log.Info("configuration_command_done", "configuration", config, "nodes", len(ids))
		return runResult{status: CFSConfigured, hosts: hosts}
	case errors.Is(context.Cause(ctx), errTimedOut):
		err = fmt.Errorf("timed out after %s", r.cfg.Timeout)
		hosts = nil // a report cut short says nothing
	}
	r.log.Warn("configuration_command_failed", "configuration", config, "nodes", len(ids), "err", err)
	msg := fmt.Sprintf("configuration command for %s: %v", config, err)
	if o := strings.TrimSpace(out.String()); o != "" {
		msg += ": " + o
	}
	return runResult{status: CFSFailed, msg: msg, hosts: hosts}
}

// perHost is a node's outcome from Ansible's report of its host:
// configured when its tasks went through, whatever the run's exit status
// (Ansible exits non-zero when any host failed); else failed, with what
// failed it when the report says, else the run's error.
func perHost(h hostResult, config, msg string) (string, string) {
	switch {
	case h.ok:
		return CFSConfigured, ""
	case h.why != "":
		return CFSFailed, fmt.Sprintf("configuration command for %s: %s", config, h.why)
	case msg == "":
		return CFSFailed, fmt.Sprintf("configuration command for %s: failed or unreachable in its PLAY RECAP", config)
	}
	return CFSFailed, msg
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
	aliases := s.hostnames()
	var errs []error
	for _, config := range slices.Sorted(maps.Keys(groups)) {
		ids := groups[config]
		slices.Sort(ids)
		if err := s.cmd.start(ctx, ids, config, batch, aliases); err != nil {
			errs = append(errs, fmt.Errorf("configuration command for %s: %w", config, err))
		}
	}
	return errors.Join(errs...)
}

// hostnames are the enabled nodes' hostnames by HSM's NID, as CSM names
// them (nid000001), lower-case hostname -> xname.
func (s *Service) hostnames() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	for id, o := range s.observed {
		if o.nid != nil {
			out[fmt.Sprintf("nid%06d", *o.nid)] = id
		}
	}
	return out
}
