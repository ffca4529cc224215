package ctl

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"sort"

	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/nodes/wire"
)

// applyMode is what `hms apply`, `hms diff` and `hms delete` ask of the
// nodes daemon.
type applyMode string

const (
	modeApply  applyMode = "apply"
	modeDiff   applyMode = "diff"
	modeDelete applyMode = "delete"
)

func applyCommands() []command {
	return []command{
		{name: "apply", summary: "make the nodes, boot profiles and node groups what a nodes file declares (-f FILE|DIR|-), printing the plan",
			maxArgs: 0, output: true, define: defineApply(modeApply), more: applyHelp},
		{name: "diff", summary: "print what hms apply -f would change (create, update, delete per resource and service), changing nothing",
			maxArgs: 0, output: true, define: defineApply(modeDiff), more: applyHelp},
		{name: "delete", summary: "delete the nodes, boot profiles and node groups a nodes file declares",
			maxArgs: 0, output: true, define: defineApply(modeDelete), more: applyHelp},
	}
}

const applyHelp = `A nodes file is YAML or JSON: documents separated by ---, each a resource
with kind: ComputeNode, BootProfile or NodeGroup at top level; or OpenCHAMI's
ochami discover static file (a top-level nodes: list). A directory stands for
its *.yaml, *.yml and *.json files in name order. A file with errors is
refused whole, one line per error (FILE:LINE: what), and nothing is sent.
-o table prints the plan with a diff per resource; -o wide also lists the
unchanged resources and each service's diff; -o json|yaml print the plan as
the daemon answered it. The exit status of apply and delete is 1 when any
change failed. hms diff exits as kubectl diff does: 0 when the file changes
nothing, 1 when it would change something, 2 on an error (a bad file, the
daemon unreachable or refusing the set).
`

// applyFlags are the flags of apply, diff and delete.
type applyFlags struct {
	file    *string
	prune   *bool
	dryRun  *bool
	noColor *bool
}

func defineApply(mode applyMode) func(fs *flag.FlagSet) execFunc {
	return func(fs *flag.FlagSet) execFunc {
		f := applyFlags{prune: new(bool), dryRun: new(bool)}
		f.file = fs.String("f", "", "nodes `FILE`, a DIR of them, or - for stdin")
		if mode != modeDelete {
			f.prune = fs.Bool("prune", false, "also delete what earlier applies created but the file no longer declares")
		}
		if mode != modeDiff {
			f.dryRun = fs.Bool("dry-run", false, "print the plan, change nothing")
		}
		f.noColor = fs.Bool("no-color", false, "no colours even on a terminal (also when NO_COLOR is set)")
		return func(ctx context.Context, s *session, _ []string) error {
			return s.apply(ctx, mode, f)
		}
	}
}

func (s *session) apply(ctx context.Context, mode applyMode, f applyFlags) error {
	plan, err := s.sendApply(ctx, mode, f)
	if mode != modeDiff {
		return err
	}
	// kubectl diff's statuses: 0 no change, 1 changes, above 1 an error.
	switch {
	case err == nil && changes(plan):
		return &cli.ExitError{Code: 1}
	case err == nil || errors.As(err, new(*cli.UsageError)):
		return err
	}
	return &cli.ExitError{Code: 2, Err: explain(err)}
}

// sendApply reads the file, sends it and prints the plan.
func (s *session) sendApply(ctx context.Context, mode applyMode, f applyFlags) (wire.Plan, error) {
	if *f.file == "" {
		return wire.Plan{}, usagef("%s: want -f FILE, DIR or - (see hms help %s)", mode, mode)
	}
	req, err := s.applyRequest(ctx, mode, f)
	if err != nil {
		return wire.Plan{}, err
	}
	plan, err := s.nodes().Apply(ctx, req)
	if err != nil {
		return plan, err
	}
	colour := !*f.noColor && s.Getenv("NO_COLOR") == "" && isTerminal(s.Stdout)
	if err := s.emit(plan, table{text: planText(plan, colour)}); err != nil {
		return plan, err
	}
	return plan, planError(mode, plan)
}

// changes reports whether the plan changes anything.
func changes(p wire.Plan) bool {
	for _, c := range p.Changes {
		if c.Action != wire.ActionUnchanged {
			return true
		}
	}
	return false
}

// applyRequest reads and checks the nodes file; any error is printed on
// stderr, one line each, and nothing is sent.
func (s *session) applyRequest(ctx context.Context, mode applyMode, f applyFlags) (wire.ApplyRequest, error) {
	m, errs := readManifest(*f.file, s.stdin())
	for _, w := range m.warnings {
		fmt.Fprintf(s.Stderr, "%s: warning: %s\n", w.at, w.msg)
	}
	req := wire.ApplyRequest{Resources: resources(m.decls), DryRun: mode == modeDiff || *f.dryRun,
		Prune: *f.prune, Delete: mode == modeDelete}
	if len(errs) == 0 && mode != modeDelete {
		errs = append(errs, s.checkReferences(ctx, m.decls, req.Prune)...)
		req.Secrets, errs = readSecretsInto(m.decls, errs)
	}
	if len(errs) > 0 {
		sortErrors(errs)
		for _, e := range errs {
			fmt.Fprintln(s.Stderr, e)
		}
		return req, failf("%s: %s: %d errors, nothing sent", mode, *f.file, len(errs))
	}
	if len(req.Resources) == 0 && !req.Prune {
		return req, failf("%s: %s declares no resource", mode, *f.file)
	}
	return req, nil
}

func readSecretsInto(ds []decl, errs []fileError) (map[string]wire.Credentials, []fileError) {
	sec, e := readSecrets(ds)
	if len(sec) == 0 {
		sec = nil
	}
	return sec, append(errs, e...)
}

// checkReferences finds the boot profiles nodes and groups name but the
// file does not define. With -prune each is an error: prune would delete
// the profile the node boots. Without, the daemon is asked whether it has
// them (applied from another file); only those it lacks are errors.
func (s *session) checkReferences(ctx context.Context, ds []decl, prune bool) []fileError {
	names, at := references(ds)
	var errs []fileError
	for _, name := range names {
		if prune {
			errs = append(errs, fileError{at: at[name], msg: fmt.Sprintf("boot_profile %s is not defined in the file (with -prune the file must define every profile it uses)", name)})
			continue
		}
		ok, err := s.hasBootProfile(ctx, name)
		if err != nil {
			errs = append(errs, fileError{at: at[name], msg: fmt.Sprintf("boot_profile %s is not defined in the file and the daemon could not be asked: %v", name, explain(err))})
			continue
		}
		if !ok {
			errs = append(errs, fileError{at: at[name], msg: fmt.Sprintf("boot_profile %s is defined neither in the file nor on the nodes daemon", name)})
		}
	}
	return errs
}

func sortErrors(errs []fileError) {
	sort.SliceStable(errs, func(i, j int) bool {
		if errs[i].at.file != errs[j].at.file {
			return errs[i].at.file < errs[j].at.file
		}
		return errs[i].at.line < errs[j].at.line
	})
}

// planError is the failure of a plan some change of which failed.
func planError(mode applyMode, p wire.Plan) error {
	failed, first := 0, -1
	for i, c := range p.Changes {
		if c.Error != "" {
			failed++
			if first < 0 {
				first = i
			}
		}
	}
	if failed == 0 {
		return nil
	}
	c := p.Changes[first]
	return failf("%s: %d of %d changes failed; first %s %s: %s", mode, failed, len(p.Changes), c.Kind, c.Name, c.Error)
}

// hasBootProfile reports whether the nodes daemon has the boot profile name.
func (s *session) hasBootProfile(ctx context.Context, name string) (bool, error) {
	_, _, err := s.nodes().BootProfile(ctx, name)
	if errors.Is(err, problem.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}
