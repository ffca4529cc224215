package ctl

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/hmsuite/hms/internal/xname"
)

// bosApplyStaged is `hms bos applystaged`, Slurm's RebootProgram: the node
// being rebooted (scontrol reboot) asks bos to apply what a staged session
// holds for it, so bos reboots it into its new image; with nothing staged
// it runs -otherwise (a plain reboot) instead.
func bosApplyStaged() command {
	return command{name: "bos applystaged", args: "[XNAME...]", maxArgs: -1, define: defineApplyStaged,
		summary: "apply the staged state of nodes (default: this node, -xname-file): Slurm's RebootProgram",
		more: "In slurm.conf: RebootProgram=\"/usr/bin/hms bos applystaged -otherwise 'systemctl reboot'\".\n" +
			"Prints one line per node (succeeded: bos reboots it; ignored: nothing staged; failed);\n" +
			"runs -otherwise when every node was ignored; exits 1 if any failed.\n"}
}

func defineApplyStaged(fs *flag.FlagSet) execFunc {
	file := fs.String("xname-file", "/etc/cray/xname", "`FILE` holding this node's xname, when no XNAME is given")
	otherwise := fs.String("otherwise", "", "shell `COMMAND` run when nothing is staged for the nodes (e.g. 'systemctl reboot')")
	return func(ctx context.Context, s *session, args []string) error {
		if len(args) == 0 {
			b, err := os.ReadFile(*file)
			if err != nil {
				return usagef("bos applystaged: no XNAME given and %v", err)
			}
			args = strings.Fields(string(b))
		}
		for i, a := range args {
			if !xname.Valid(a) {
				return usagef("bos applystaged: %q is not an xname", a)
			}
			args[i] = xname.Normalize(a)
		}
		res, err := s.bos().ApplyStaged(ctx, args)
		if err != nil {
			return err
		}
		for _, r := range []struct {
			what string
			ids  []string
		}{{"succeeded", res.Succeeded}, {"ignored", res.Ignored}, {"failed", res.Failed}} {
			for _, id := range r.ids {
				fmt.Fprintf(s.Stdout, "%s %s\n", id, r.what)
			}
		}
		if len(res.Failed) > 0 {
			return failf("bos applystaged: %d of %d nodes failed (unknown to bos, or their staged session is gone)", len(res.Failed), len(args))
		}
		if len(res.Ignored) == len(args) && *otherwise != "" {
			cmd := exec.CommandContext(ctx, "/bin/sh", "-c", *otherwise)
			cmd.Stdout, cmd.Stderr = s.Stdout, s.Stderr
			if err := cmd.Run(); err != nil {
				return failf("bos applystaged: -otherwise %q: %v", *otherwise, err)
			}
		}
		return nil
	}
}
