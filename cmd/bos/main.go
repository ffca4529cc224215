// Command bos is the Boot Orchestration Service: session templates,
// sessions and the operators that boot, reboot and shut down nodes through
// BSS and PCS, behind the BOS v2 REST API.
package main

import (
	"context"
	"io"
	"os"

	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/orchestrator"
)

func main() { cli.Main("bos", run) }

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	f := cli.NewFlagSet("bos", getenv, stdout)
	fl := orchestrator.RegisterFlags(f)
	af := auth.RegisterFlags(f)
	if err := f.ParseOrUsage(args); err != nil {
		return err
	}
	cfg, err := fl.Config()
	if err != nil {
		return err
	}
	if cfg.Auth, err = af.Config(orchestrator.AuthTable()); err != nil {
		return err
	}
	cfg.Log = cli.NewLogger(os.Stderr, *fl.Level)
	d, err := orchestrator.StartDaemon(ctx, cfg)
	if err != nil {
		return err
	}
	return d.Run(ctx)
}
