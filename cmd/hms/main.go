// Command hms is the suite's all-in-one binary. `hms up` runs sls, hsm, hbtd,
// hmnfd, bss and pcs in one process, each on its usual port with its own SQLite file
// under one data directory, joined by an in-process bus instead of Kafka.
package main

import (
	"context"
	"fmt"
	"io"

	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/version"
)

func main() { cli.Main("hms", run) }

const usage = `Usage: hms <command> [flags]

Commands:
  up       run sls, hsm, hbtd, hmnfd, bss, pcs and reds in one process (hms up -help for its flags)
  power    on|off|reset|status XNAME... or -group G: power components through pcs
  version  print the version of this build
`

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) == 0 {
		return &cli.UsageError{Err: fmt.Errorf("a command is required (commands: up, power, version; see hms -help)")}
	}
	switch args[0] {
	case "up":
		return up(ctx, args[1:], getenv, stdout)
	case "power":
		return powerCmd(ctx, args[1:], getenv, stdout)
	case "version", "-version", "--version":
		fmt.Fprintf(stdout, "hms %s\n", version.String())
		return nil
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		return &cli.UsageError{Err: fmt.Errorf("unknown command %q (commands: up, power, version; see hms -help)", args[0])}
	}
}
