// Command hms is the suite's all-in-one binary. `hms up` runs sls, hsm, hbtd,
// hmnfd, bss, pcs, bos, nodes and reds in one process, each on its usual port with its own
// SQLite file under one data directory, joined by an in-process bus instead of
// Kafka. Every other command (status, get, describe, power, ...) is the
// operator's CLI of package ctl, which talks to the daemons over HTTP.
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/hmsuite/hms/ctl"
	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/version"
)

func main() { cli.Main("hms", run) }

// own are the commands this binary runs itself; ctl runs the others.
func own() []ctl.Summary {
	return []ctl.Summary{
		{Name: "up", Text: "run sls, hsm, hbtd, hmnfd, bss, pcs, bos, nodes and reds in one process (hms up -help for its flags)"},
		{Name: "sim", Text: "simulate BMCs, switches and nodes against a running suite (hms sim -help; docs/sim.md)",
			Words: []string{"list", "add", "remove", "power on", "power off", "kill-bmc", "help"}},
		{Name: "version", Text: "print the version of this build"},
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) == 0 {
		return &cli.UsageError{Err: fmt.Errorf("a command is required (see hms help)")}
	}
	switch args[0] {
	case "up":
		return up(ctx, args[1:], getenv, stdout)
	case "sim":
		return simCmd(ctx, args[1:], getenv, stdout)
	case "version", "-version", "--version":
		fmt.Fprintf(stdout, "hms %s\n", version.String())
		return nil
	default:
		return ctl.Run(ctx, args, ctl.Options{Getenv: getenv, Stdout: stdout, Stderr: os.Stderr,
			SystemConfig: "/etc/hms/config.yaml", Others: own()})
	}
}
