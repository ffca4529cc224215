package ctl

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/power/pcs"
)

// powerCommands are `hms power on|off|reset|status`: a pcs transition,
// waited for, or the power state from pcs's cache. pcs's URL is resolved
// as every daemon's (-pcs-url, HMS_PCS_URL, the config files).
func powerCommands() []command {
	return []command{
		{name: "power on", args: "XNAME...", summary: "power components on through pcs and wait until each is on or failed",
			maxArgs: -1, output: true, define: definePower(pcs.OpOn, pcs.OpOn), more: powerHelp},
		{name: "power off", args: "XNAME...", summary: "power components off through pcs (graceful, then forced after half the deadline; -force: at once)",
			maxArgs: -1, output: true, define: definePower(pcs.OpOff, pcs.OpForceOff), more: powerHelp},
		{name: "power reset", args: "XNAME...", summary: "restart components through pcs (Soft-Restart; -force: Hard-Restart)",
			maxArgs: -1, output: true, define: definePower(pcs.OpSoftRestart, pcs.OpHardRestart), more: powerHelp},
		{name: "power status", args: "XNAME...", summary: "power and management state of components, from pcs's cache",
			maxArgs: -1, output: true, define: definePowerStatus},
	}
}

const powerHelp = "Prints one row per component (XNAME STATUS DESCRIPTION ERROR) once the\n" +
	"transition has ended, and exits 1 if any component did not succeed.\n"

// powerTargets are the components named and the members of -group.
type powerTargets struct{ group *string }

func declarePowerTargets(fs *flag.FlagSet) powerTargets {
	return powerTargets{group: fs.String("group", "", "act on the members of HSM group `NAME` too")}
}

func (p powerTargets) resolve(ctx context.Context, s *session, cmd string, args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		if !xname.Valid(a) {
			return nil, usagef("%s: %q is not an xname", cmd, a)
		}
		out = append(out, xname.Normalize(a))
	}
	if *p.group != "" {
		members, err := s.hsm().Components(ctx, url.Values{"group": {*p.group}})
		if err != nil {
			return nil, fmt.Errorf("%s: group %s: %w", cmd, *p.group, err)
		}
		for _, m := range members {
			out = append(out, m.ID)
		}
	}
	if len(out) == 0 {
		return nil, usagef("%s: name components (XNAME...) or -group", cmd)
	}
	return out, nil
}

func definePower(plain, forced pcs.Operation) func(fs *flag.FlagSet) execFunc {
	return func(fs *flag.FlagSet) execFunc {
		targets := declarePowerTargets(fs)
		force := fs.Bool("force", false, "off: Force-Off; reset: Hard-Restart")
		deadline := fs.Int("deadline", 5, "taskDeadlineMinutes: `MINUTES` a task may take")
		interval := fs.Duration("interval", time.Second, "ask pcs how the transition goes every `DURATION`")
		return func(ctx context.Context, s *session, args []string) error {
			cmd := "power " + strings.ToLower(string(plain))
			if *deadline < 1 || *interval <= 0 {
				return usagef("%s: -deadline and -interval must be positive", cmd)
			}
			xs, err := targets.resolve(ctx, s, cmd, args)
			if err != nil {
				return err
			}
			op := plain
			if *force {
				op = forced
			}
			return powerTransition(ctx, s, op, *deadline, *interval, xs)
		}
	}
}

// powerTransition starts the transition, waits for it (drawing "3 of 64
// done" on a terminal) and prints its tasks.
func powerTransition(ctx context.Context, s *session, op pcs.Operation, deadline int, interval time.Duration, xs []string) error {
	locs := make([]pcs.Location, len(xs))
	for i, x := range xs {
		locs[i] = pcs.Location{Xname: x}
	}
	c := s.pcs()
	created, err := c.StartTransition(ctx, op, deadline, locs)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Stderr, "transition %s %s\n", created.TransitionID, created.Operation)
	tty := isTerminal(s.Stderr)
	var tr pcs.Transition
	for {
		if tr, err = c.Transition(ctx, created.TransitionID); err != nil {
			return err
		}
		if tr.Done() {
			break
		}
		if tty {
			done := tr.Counts.Succeeded + tr.Counts.Failed + tr.Counts.Unsupported
			fmt.Fprintf(s.Stderr, "\r%s: %d of %d done\033[K", op, done, tr.Counts.Total)
		}
		if err := s.Sleep(ctx, interval); err != nil {
			return err
		}
	}
	if tty {
		fmt.Fprintln(s.Stderr)
	}
	t := table{cols: []column{{name: "XNAME"}, {name: "STATUS"}, {name: "DESCRIPTION"}, {name: "ERROR"}}}
	failed := 0
	for _, task := range tr.Tasks {
		t.rows = append(t.rows, []string{task.Xname, task.Status, task.Description, task.Error})
		if task.Status != pcs.TaskSucceeded {
			failed++
		}
	}
	if err := s.emit(tr, t); err != nil {
		return err
	}
	if failed > 0 {
		return errPartial{msg: fmt.Sprintf("%d of %d components did not reach %s (transition %s)", failed, len(tr.Tasks), op, tr.TransitionID)}
	}
	return nil
}

func definePowerStatus(fs *flag.FlagSet) execFunc {
	targets := declarePowerTargets(fs)
	return func(ctx context.Context, s *session, args []string) error {
		xs, err := targets.resolve(ctx, s, "power status", args)
		if err != nil {
			return err
		}
		st, err := s.pcs().PowerStatus(ctx, pcs.PowerStatusRequest{Xnames: xs})
		if err != nil {
			return err
		}
		t := table{cols: []column{{name: "XNAME"}, {name: "POWER"}, {name: "MANAGEMENT"}, {name: "ERROR"},
			{name: "TRANSITIONS", wide: true}, {name: "UPDATED", wide: true}}}
		missing := 0
		for _, p := range st {
			if p.PowerState == "" {
				missing++
			}
			t.rows = append(t.rows, []string{p.Xname, p.PowerState, p.MgmtState, p.Error,
				strings.Join(p.Supported, ","), p.LastUpdated})
		}
		if err := s.emit(st, t); err != nil {
			return err
		}
		if missing > 0 {
			return errPartial{msg: fmt.Sprintf("power status: %d of %d components have no power state in pcs", missing, len(st))}
		}
		return nil
	}
}
