package ctl_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmsuite/hms/ctl"
	"github.com/hmsuite/hms/discovery"
	"github.com/hmsuite/hms/fanout"
	"github.com/hmsuite/hms/heartbeat"
	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/ipxe"
	"github.com/hmsuite/hms/layout"
	"github.com/hmsuite/hms/nodes"
	"github.com/hmsuite/hms/orchestrator"
	"github.com/hmsuite/hms/power"
	"github.com/hmsuite/hms/statemgr"
)

// daemon is what the harness needs of each daemon.
type daemon interface {
	URL() string
	Run(ctx context.Context) error
}

// harness is what starting the daemons of one test shares.
type harness struct {
	t    *testing.T
	dir  string
	pub  *bus.Memory
	urls map[string]string // name -> URL of the daemons started so far
	log  *slog.Logger
}

// startSuite runs sls, hsm, hbtd, hmnfd, bss, pcs, bos, reds and nodes on loopback
// ports the kernel picks, each daemon's peers set as `hms up` sets them, and
// returns each one's URL. Everything stops at the end of the test.
func startSuite(t *testing.T) map[string]string {
	t.Helper()
	h := &harness{t: t, dir: t.TempDir(), pub: bus.NewUnread(), urls: map[string]string{}, log: slog.New(slog.DiscardHandler)}
	t.Cleanup(func() { h.pub.Close() }) // after the daemons stopped
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 9)
	n := 0
	t.Cleanup(func() {
		cancel()
		for range n {
			if err := <-errc; err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("daemon: %v", err)
			}
		}
	})
	for _, d := range []struct {
		name  string
		start func(context.Context, *harness) (daemon, error)
	}{{"sls", startSLS}, {"hsm", startHSM}, {"hbtd", startHBTD}, {"hmnfd", startHMNFD}, {"bss", startBSS}, {"pcs", startPCS}, {"bos", startBOS}, {"reds", startREDS}, {"nodes", startNodes}} {
		dm, err := d.start(ctx, h)
		if err != nil {
			t.Fatalf("start %s: %v", d.name, err)
		}
		h.urls[d.name] = dm.URL()
		n++
		go func() { errc <- dm.Run(ctx) }()
	}
	return h.urls
}

// flags parses the daemon's own command line: a loopback port, its
// database in the test's directory, and more.
func (h *harness) flags(name string, register func(*cli.FlagSet), more ...string) {
	h.t.Helper()
	f := cli.NewFlagSet(name, func(string) string { return "" }, io.Discard)
	f.Environ = func() []string { return nil }
	register(f)
	mustOK(h.t, f.Parse(append([]string{"-listen", "127.0.0.1:0", "-db", filepath.Join(h.dir, name+".db")}, more...)))
}

func startSLS(ctx context.Context, h *harness) (daemon, error) {
	var fl *layout.DaemonFlags
	h.flags("sls", func(f *cli.FlagSet) { fl = layout.RegisterFlags(f) })
	cfg, err := fl.Config()
	mustOK(h.t, err)
	cfg.Log = h.log
	return layout.StartDaemon(ctx, cfg)
}

func startHSM(ctx context.Context, h *harness) (daemon, error) {
	var fl *statemgr.DaemonFlags
	h.flags("hsm", func(f *cli.FlagSet) { fl = statemgr.RegisterFlags(f, func(string) string { return "" }) },
		"-sls-url", h.urls["sls"], "-cred-key-file", filepath.Join(h.dir, "hsm-cred.key"))
	cfg, err := fl.Config()
	mustOK(h.t, err)
	cfg.Log, cfg.Publisher = h.log, h.pub
	return statemgr.StartDaemon(ctx, cfg)
}

func startHBTD(ctx context.Context, h *harness) (daemon, error) {
	var fl *heartbeat.DaemonFlags
	h.flags("hbtd", func(f *cli.FlagSet) { fl = heartbeat.RegisterFlags(f) }, "-hsm-url", h.urls["hsm"])
	listen, o, err := fl.Config()
	mustOK(h.t, err)
	o.Log, o.LogLevel, o.Publisher = h.log, new(slog.LevelVar), h.pub
	return heartbeat.StartDaemon(ctx, listen, o)
}

func startHMNFD(ctx context.Context, h *harness) (daemon, error) {
	var fl *fanout.DaemonFlags
	h.flags("hmnfd", func(f *cli.FlagSet) { fl = fanout.RegisterFlags(f) }, "-hsm-url", h.urls["hsm"])
	cfg, err := fl.Config()
	mustOK(h.t, err)
	cfg.Log, cfg.LogLevel = h.log, new(slog.LevelVar)
	return fanout.StartDaemon(ctx, cfg)
}

func startBSS(ctx context.Context, h *harness) (daemon, error) {
	var fl *ipxe.DaemonFlags
	h.flags("bss", func(f *cli.FlagSet) { fl = ipxe.RegisterFlags(f) }, "-hsm-url", h.urls["hsm"])
	cfg, err := fl.Config()
	mustOK(h.t, err)
	cfg.Log = h.log
	return ipxe.StartDaemon(ctx, cfg)
}

func startPCS(ctx context.Context, h *harness) (daemon, error) {
	var fl *power.DaemonFlags
	h.flags("pcs", func(f *cli.FlagSet) { fl = power.RegisterFlags(f) }, "-hsm-url", h.urls["hsm"])
	cfg, err := fl.Config()
	mustOK(h.t, err)
	cfg.Log = h.log
	return power.StartDaemon(ctx, cfg)
}

func startBOS(ctx context.Context, h *harness) (daemon, error) {
	var fl *orchestrator.DaemonFlags
	h.flags("bos", func(f *cli.FlagSet) { fl = orchestrator.RegisterFlags(f) }, "-hsm-url", h.urls["hsm"],
		"-bss-url", h.urls["bss"], "-pcs-url", h.urls["pcs"])
	cfg, err := fl.Config()
	mustOK(h.t, err)
	cfg.Log = h.log
	return orchestrator.StartDaemon(ctx, cfg)
}

func startREDS(ctx context.Context, h *harness) (daemon, error) {
	var fl *discovery.DaemonFlags
	h.flags("reds", func(f *cli.FlagSet) { fl = discovery.RegisterFlags(f) }, "-hsm-url", h.urls["hsm"],
		"-sls-url", h.urls["sls"], "-cred-key-file", filepath.Join(h.dir, "reds-cred.key"))
	cfg, err := fl.Config()
	mustOK(h.t, err)
	cfg.Log, cfg.Bus = h.log, h.pub
	return discovery.StartDaemon(ctx, cfg)
}

func startNodes(ctx context.Context, h *harness) (daemon, error) {
	var fl *nodes.DaemonFlags
	h.flags("nodes", func(f *cli.FlagSet) { fl = nodes.RegisterFlags(f) }, "-sls-url", h.urls["sls"], "-hsm-url", h.urls["hsm"],
		"-bss-url", h.urls["bss"], "-hbtd-url", h.urls["hbtd"], "-cred-key-file", filepath.Join(h.dir, "nodes-cred.key"))
	cfg, err := fl.Config()
	mustOK(h.t, err)
	cfg.Log = h.log
	return nodes.StartDaemon(ctx, cfg)
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// result is what one CLI run printed and returned.
type result struct {
	stdout, stderr string
	err            error
}

// code is the exit status cli.Main would give.
func (r result) code() int {
	switch {
	case r.err == nil, errors.Is(r.err, cli.ErrHelp):
		return 0
	case errors.As(r.err, new(*cli.UsageError)):
		return 2
	}
	return 1
}

// env is a process environment for the CLI: HOME in a temporary directory
// (no config file unless the test writes one) and the given variables.
func env(t *testing.T, vars map[string]string) func(string) string {
	home := t.TempDir()
	return func(k string) string {
		if k == "HOME" {
			return home
		}
		return vars[k]
	}
}

// suiteEnv points the CLI at the daemons of urls through HMS_*_URL.
func suiteEnv(t *testing.T, urls map[string]string) func(string) string {
	vars := map[string]string{}
	for name, u := range urls {
		vars["HMS_"+strings.ToUpper(name)+"_URL"] = u
	}
	return env(t, vars)
}

// hms runs the CLI with args in environment getenv.
func hms(t *testing.T, getenv func(string) string, args ...string) result {
	t.Helper()
	return hmsWith(t, ctl.Options{Getenv: getenv}, args...)
}

// hmsWith runs the CLI with args and options o (its output captured).
func hmsWith(t *testing.T, o ctl.Options, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	o.Stdout, o.Stderr = &out, &errb
	err := ctl.Run(t.Context(), args, o)
	return result{stdout: out.String(), stderr: errb.String(), err: err}
}

// hmsJSON runs the CLI with -o json appended and decodes its output into v.
func hmsJSON(t *testing.T, getenv func(string) string, v any, args ...string) {
	t.Helper()
	r := hms(t, getenv, append(args, "-o", "json")...)
	if r.err != nil {
		t.Fatalf("hms %s: %v (stderr %q)", strings.Join(args, " "), r.err, r.stderr)
	}
	if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
		t.Fatalf("hms %s -o json: %v in %q", strings.Join(args, " "), err, r.stdout)
	}
}

// runWith runs the CLI with exactly the environment vars and system config
// file system.
func runWith(t *testing.T, vars map[string]string, system string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	err := ctl.Run(t.Context(), args, ctl.Options{Getenv: func(k string) string { return vars[k] },
		Stdout: &out, Stderr: &errb, SystemConfig: system})
	return result{stdout: out.String(), stderr: errb.String(), err: err}
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
