// Package ctl is the operator's command line of the suite: every command of
// the hms binary but `hms up` and `hms version` (status, get, describe,
// layout load, boot set, node add|remove, wait, power, bos, apply|diff|delete
// -f, config, completion, help).
//
// It talks to the daemons only over their HTTP APIs, with their typed
// clients and wire types (layout.Client, statemgr/client, agent.Client for
// hbtd, fanout.Client, ipxe.Client for bss, power/client for pcs,
// orchestrator.Client for bos, nodes/client for the nodes daemon), exactly
// as a remote operator would: it opens no database and runs no server. Each daemon's URL comes
// from a flag (-hsm-url), else its environment variable (HMS_HSM_URL), else
// ~/.config/hms/config.yaml, else /etc/hms/config.yaml, else the daemon's
// default port on 127.0.0.1 (see config.go).
//
// Output is an aligned table by default, or -o wide|json|yaml; json and yaml
// carry the daemons' own wire field names. Errors are one line; a bad
// command, flag or argument is a *cli.UsageError (exit 2), anything else a
// failure (exit 1).
package ctl

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/hmsuite/hms/internal/cli"
)

// Options is what the CLI needs from the program around it.
type Options struct {
	// Getenv reads the environment (HMS_*_URL, HOME, XDG_CONFIG_HOME).
	Getenv func(string) string
	// Stdin is what "-" reads (nil: os.Stdin).
	Stdin io.Reader
	// Stdout receives the output; Stderr the progress lines and warnings.
	Stdout, Stderr io.Writer
	// SystemConfig is the site-wide config file, /etc/hms/config.yaml.
	SystemConfig string
	// HTTP sends the requests; nil means a client whose timeout is -timeout.
	HTTP *http.Client
	// Now and Sleep are the clock of `hms wait` and of the progress lines
	// (nil: the real clock).
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
	// Others are the commands the binary runs itself (up, version), listed by
	// `hms help` and completed by `hms completion`.
	Others []Summary
}

// Summary names a command and says in a line what it does.
type Summary struct {
	Name, Text string
	// Words are its subcommands, for completion ("list", "power on").
	Words []string
}

func (o *Options) defaults() {
	if o.Getenv == nil {
		o.Getenv = func(string) string { return "" }
	}
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
}

// stdin is what a "-" file argument reads.
func (o Options) stdin() io.Reader {
	if o.Stdin == nil {
		return os.Stdin
	}
	return o.Stdin
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Run runs the command args names (args[0] is the command, such as "get").
// It returns cli.ErrHelp after printing help, a *cli.UsageError for a bad
// command line, and other errors for failures.
func Run(ctx context.Context, args []string, o Options) error {
	o.defaults()
	cmds := commands()
	if len(args) == 0 || isHelp(args[0]) {
		return help(o, cmds, args)
	}
	cmd, rest, err := find(cmds, args)
	if err != nil {
		return err
	}
	return cmd.run(ctx, o, rest)
}

func isHelp(s string) bool { return s == "help" || s == "-h" || s == "-help" || s == "--help" }

// find picks the command args name and returns the arguments after its
// name. A command's name is one to three words ("status", "get nodes",
// "bos sessions list"); args naming only a group of them ("bos",
// "bos sessions") is a usage error listing the group's next words.
func find(cmds []command, args []string) (command, []string, error) {
	for _, c := range cmds {
		if w := strings.Fields(c.name); len(args) >= len(w) && slices.Equal(args[:len(w)], w) {
			return c, args[len(w):], nil
		}
	}
	depth := 0
	for depth < len(args) && len(below(cmds, args[:depth+1])) > 0 {
		depth++
	}
	if depth == 0 {
		return command{}, nil, cli.Usagef("unknown command %q (see hms help)", args[0])
	}
	name := strings.Join(args[:depth], " ")
	subs := strings.Join(nextWords(below(cmds, args[:depth]), depth), ", ")
	if len(args) == depth || isHelp(args[depth]) {
		return command{}, nil, cli.Usagef("%s: want one of %s (see hms help %s)", name, subs, name)
	}
	return command{}, nil, cli.Usagef("%s: unknown %q, want one of %s", name, args[depth], subs)
}

// below are the commands whose name is longer than prefix and starts with it.
func below(cmds []command, prefix []string) []command {
	var g []command
	for _, c := range cmds {
		if w := strings.Fields(c.name); len(w) > len(prefix) && slices.Equal(w[:len(prefix)], prefix) {
			g = append(g, c)
		}
	}
	return g
}

// nextWords are the distinct words at position depth of the commands' names.
func nextWords(group []command, depth int) []string {
	var subs []string
	for _, c := range group {
		if w := strings.Fields(c.name)[depth]; !slices.Contains(subs, w) {
			subs = append(subs, w)
		}
	}
	return subs
}

// run parses the command line of c and calls it.
func (c command) run(ctx context.Context, o Options, args []string) error {
	fs := flag.NewFlagSet("hms "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	conn := declareConnection(fs)
	var format *string
	if c.output {
		format = fs.String("o", "table", "output `FORMAT`: table, wide, json or yaml")
	}
	exec := c.define(fs)
	pos, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		c.usage(o.Stdout, fs)
		return cli.ErrHelp
	}
	if err != nil {
		return cli.Usagef("%s: %v (see hms help %s)", c.name, err, c.name)
	}
	if err := c.checkArgs(pos); err != nil {
		return err
	}
	s, err := newSession(o, conn, format)
	if err != nil {
		return err
	}
	return explain(exec(ctx, s, pos))
}

// checkArgs enforces the command's count of positional arguments.
func (c command) checkArgs(pos []string) error {
	switch {
	case len(pos) < c.minArgs:
		return cli.Usagef("%s: want %s (see hms help %s)", c.name, c.args, c.name)
	case c.maxArgs >= 0 && len(pos) > c.maxArgs:
		return cli.Usagef("%s: unexpected argument %q (see hms help %s)", c.name, pos[c.maxArgs], c.name)
	}
	return nil
}

// parseInterleaved parses flags wherever they are among the arguments
// (`hms describe node X -o json`) and returns the other arguments; after
// "--" everything is an argument.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// isTerminal reports whether w is a terminal, where progress lines are
// redrawn in place.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// errPartial reports that a command printed what it could but some of it
// failed (a daemon down during `hms status`); the details were printed.
type errPartial struct{ msg string }

func (e errPartial) Error() string { return e.msg }

// failf returns a plain failure (exit 1).
func failf(format string, a ...any) error { return fmt.Errorf(format, a...) }
