package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/power/client"
	"github.com/hmsuite/hms/power/pcs"
	hsmclient "github.com/hmsuite/hms/statemgr/client"
)

// powerOps maps hms power's actions to PCS operations (plain, -force).
var powerOps = map[string][2]pcs.Operation{
	"on":    {pcs.OpOn, pcs.OpOn},
	"off":   {pcs.OpOff, pcs.OpForceOff},
	"reset": {pcs.OpSoftRestart, pcs.OpHardRestart},
}

// powerCmd runs `hms power on|off|reset|status XNAME... | -group G`: a
// transition through pcs, waited for, one line per component; or the power
// status from pcs's cache.
func powerCmd(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) == 0 {
		return cli.Usagef("hms power: an action is required: on, off, reset or status")
	}
	action := args[0]
	f := cli.NewFlagSet("power", getenv, stdout)
	f.Program = "hms power " + action
	f.Operands = "XNAME..."
	pcsURL := f.URL("pcs-url", "http://127.0.0.1:28007", "pcs base `URL`")
	hsmURL := f.URL("hsm-url", "http://127.0.0.1:27779", "HSM base `URL` (to expand -group)")
	group := f.String("group", "", "act on the members of HSM group `NAME` too")
	force := f.Bool("force", false, "off: Force-Off; reset: Hard-Restart")
	deadline := f.Int("deadline", 5, "taskDeadlineMinutes: `MINUTES` a task may take")
	if err := f.ParseOrUsage(args[1:]); err != nil {
		return err
	}
	xnames := f.Args()
	if *group != "" {
		members, err := hsmclient.New(*hsmURL, nil, "hms").Components(ctx, url.Values{"group": {*group}})
		if err != nil {
			return fmt.Errorf("group %s: %w", *group, err)
		}
		for _, m := range members {
			xnames = append(xnames, m.ID)
		}
	}
	if len(xnames) == 0 {
		return cli.Usagef("hms power %s: name components (XNAME...) or -group", action)
	}
	c := client.New(*pcsURL, nil, "hms")
	if action == "status" {
		return powerStatus(ctx, c, xnames, stdout)
	}
	ops, ok := powerOps[action]
	if !ok {
		return cli.Usagef("hms power: unknown action %q: on, off, reset or status", action)
	}
	op := ops[0]
	if *force {
		op = ops[1]
	}
	return powerTransition(ctx, c, op, *deadline, xnames, stdout)
}

func powerTransition(ctx context.Context, c *client.Client, op pcs.Operation, deadline int, xnames []string, stdout io.Writer) error {
	locs := make([]pcs.Location, len(xnames))
	for i, x := range xnames {
		locs[i] = pcs.Location{Xname: x}
	}
	created, err := c.StartTransition(ctx, op, deadline, locs)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "transition %s %s\n", created.TransitionID, created.Operation)
	tr, err := c.Wait(ctx, created.TransitionID, time.Second)
	if err != nil {
		return err
	}
	failed := 0
	for _, t := range tr.Tasks {
		line := fmt.Sprintf("%s %s %s", t.Xname, t.Status, t.Description)
		if t.Error != "" {
			line += ": " + t.Error
		}
		if t.Status != pcs.TaskSucceeded {
			failed++
		}
		fmt.Fprintln(stdout, line)
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d components did not reach %s", failed, len(tr.Tasks), op)
	}
	return nil
}

func powerStatus(ctx context.Context, c *client.Client, xnames []string, stdout io.Writer) error {
	st, err := c.PowerStatus(ctx, pcs.PowerStatusRequest{Xnames: xnames})
	if err != nil {
		return err
	}
	var errs []error
	for _, s := range st {
		if s.PowerState == "" {
			errs = append(errs, fmt.Errorf("%s: %s", s.Xname, s.Error))
			continue
		}
		line := fmt.Sprintf("%s %s %s", s.Xname, s.PowerState, s.MgmtState)
		if s.Error != "" {
			line += " " + s.Error
		}
		fmt.Fprintln(stdout, line)
	}
	return errors.Join(errs...)
}
