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
	"github.com/hmsuite/hms/power"
	"github.com/hmsuite/hms/statemgr"
)

// daemon is what the harness needs of each daemon.
type daemon interface {
	URL() string
	Run(ctx context.Context) error
}

// startSuite runs sls, hsm, hbtd, hmnfd, bss, pcs and reds on loopback ports the
// kernel picks, each daemon's peers set as `hms up` sets them, and returns
// each one's URL. Everything stops at the end of the test.
func startSuite(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	pub := bus.NewUnread()
	t.Cleanup(func() { pub.Close() }) // after the daemons stopped
	ctx, cancel := context.WithCancel(context.Background())
	urls := map[string]string{}
	errc := make(chan error, 7)
	n := 0
	run := func(name string, d daemon, err error) {
		t.Helper()
		if err != nil {
			cancel()
			t.Fatalf("start %s: %v", name, err)
		}
		urls[name] = d.URL()
		n++
		go func() { errc <- d.Run(ctx) }()
	}
	t.Cleanup(func() {
		cancel()
		for range n {
			if err := <-errc; err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("daemon: %v", err)
			}
		}
	})
	flags := func(name string) *cli.FlagSet {
		f := cli.NewFlagSet(name, func(string) string { return "" }, io.Discard)
		f.Environ = func() []string { return nil }
		return f
	}
	args := func(name string, more ...string) []string {
		return append([]string{"-listen", "127.0.0.1:0", "-db", filepath.Join(dir, name+".db")}, more...)
	}
	log := slog.New(slog.DiscardHandler)

	f := flags("sls")
	sls := layout.RegisterFlags(f)
	mustParse(t, f, args("sls"))
	scfg, err := sls.Config()
	mustOK(t, err)
	scfg.Log = log
	d1, err := layout.StartDaemon(ctx, scfg)
	run("sls", d1, err)

	f = flags("hsm")
	hsmf := statemgr.RegisterFlags(f, func(string) string { return "" })
	mustParse(t, f, args("hsm", "-sls-url", urls["sls"], "-cred-key-file", filepath.Join(dir, "hsm-cred.key")))
	hcfg, err := hsmf.Config()
	mustOK(t, err)
	hcfg.Log, hcfg.Publisher = log, pub
	d2, err := statemgr.StartDaemon(ctx, hcfg)
	run("hsm", d2, err)

	f = flags("hbtd")
	hbf := heartbeat.RegisterFlags(f)
	mustParse(t, f, args("hbtd", "-hsm-url", urls["hsm"]))
	listen, o, err := hbf.Config()
	mustOK(t, err)
	o.Log, o.LogLevel, o.Publisher = log, new(slog.LevelVar), pub
	d3, err := heartbeat.StartDaemon(ctx, listen, o)
	run("hbtd", d3, err)

	f = flags("hmnfd")
	nff := fanout.RegisterFlags(f)
	mustParse(t, f, args("hmnfd", "-hsm-url", urls["hsm"]))
	ncfg, err := nff.Config()
	mustOK(t, err)
	ncfg.Log, ncfg.LogLevel = log, new(slog.LevelVar)
	d4, err := fanout.StartDaemon(ctx, ncfg)
	run("hmnfd", d4, err)

	f = flags("bss")
	bf := ipxe.RegisterFlags(f)
	mustParse(t, f, args("bss", "-hsm-url", urls["hsm"]))
	bcfg, err := bf.Config()
	mustOK(t, err)
	bcfg.Log = log
	d5, err := ipxe.StartDaemon(ctx, bcfg)
	run("bss", d5, err)

	f = flags("pcs")
	pf := power.RegisterFlags(f)
	mustParse(t, f, args("pcs", "-hsm-url", urls["hsm"]))
	pcfg, err := pf.Config()
	mustOK(t, err)
	pcfg.Log = log
	d6, err := power.StartDaemon(ctx, pcfg)
	run("pcs", d6, err)

	f = flags("reds")
	rf := discovery.RegisterFlags(f)
	mustParse(t, f, args("reds", "-hsm-url", urls["hsm"], "-sls-url", urls["sls"], "-cred-key-file", filepath.Join(dir, "reds-cred.key")))
	rcfg, err := rf.Config()
	mustOK(t, err)
	rcfg.Log, rcfg.Bus = log, pub
	d7, err := discovery.StartDaemon(ctx, rcfg)
	run("reds", d7, err)
	return urls
}

func mustParse(t *testing.T, f *cli.FlagSet, args []string) {
	t.Helper()
	mustOK(t, f.Parse(args))
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
