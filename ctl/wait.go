package ctl

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/httpclient"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// waitFor is a checked `hms wait`.
type waitFor struct {
	names    []string
	states   []string
	timeout  time.Duration
	interval time.Duration
}

func defineWait(fs *flag.FlagSet) execFunc {
	state := fs.String("state", "Ready", "`STATES` to wait for (comma-separated: any of them will do)")
	timeout := fs.Duration("timeout", 5*time.Minute, "give up after `DURATION` (exit status 1, naming the components not there)")
	interval := fs.Duration("interval", 2*time.Second, "ask HSM every `DURATION`")
	return func(ctx context.Context, s *session, args []string) error {
		w := waitFor{states: cli.SplitList(*state), timeout: *timeout, interval: *interval}
		for _, a := range args {
			if !xname.Valid(a) {
				return usagef("wait: %q is not an xname", a)
			}
			w.names = append(w.names, xname.Normalize(a))
		}
		if len(w.states) == 0 || w.timeout <= 0 || w.interval <= 0 {
			return usagef("wait: -state, -timeout and -interval must not be empty or zero")
		}
		return w.run(ctx, s)
	}
}

// run polls HSM until every component is in one of the states, drawing
// "3 of 64 Ready" on stderr, and fails at the deadline naming the
// components that did not make it. HSM unreachable (restarting) is waited
// out; HSM refusing the query is not.
func (w waitFor) run(ctx context.Context, s *session) error {
	deadline := s.Now().Add(w.timeout)
	want := strings.Join(w.states, " or ")
	tty := isTerminal(s.Stderr)
	for {
		comps, err := s.hsm().QueryComponents(ctx, w.names)
		switch {
		case err == nil:
			pending := w.pending(comps)
			line := fmt.Sprintf("wait: %d of %d %s", len(w.names)-len(pending), len(w.names), want)
			if len(pending) == 0 {
				fmt.Fprintln(s.Stderr, line)
				return nil
			}
			if tty {
				fmt.Fprintf(s.Stderr, "\r%s\033[K", line)
			}
			if !s.Now().Before(deadline) {
				if tty {
					fmt.Fprintln(s.Stderr)
				}
				return failf("wait: timed out after %s: %d of %d not %s: %s", w.timeout, len(pending), len(w.names), want, strings.Join(pending, ", "))
			}
		case errors.Is(err, problem.ErrUnavailable) && httpclient.StatusCode(err) == 0:
			if !s.Now().Before(deadline) {
				return failf("wait: timed out after %s: %v", w.timeout, explain(err))
			}
		default:
			return err
		}
		if err := s.Sleep(ctx, min(w.interval, deadline.Sub(s.Now()))); err != nil {
			return err
		}
	}
}

// pending lists the components not in a wanted state, with where they are.
func (w waitFor) pending(comps []hsm.Component) []string {
	state := map[string]string{}
	for _, c := range comps {
		state[xname.Normalize(c.ID)] = c.State
	}
	var out []string
	for _, n := range w.names {
		st, ok := state[n]
		switch {
		case !ok:
			out = append(out, n+" (not in HSM)")
		case !slices.ContainsFunc(w.states, func(s string) bool { return strings.EqualFold(s, st) }):
			out = append(out, n+" ("+st+")")
		}
	}
	return out
}
