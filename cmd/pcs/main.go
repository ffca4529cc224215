// Command pcs is the Power Control Service: power transitions of
// components over Redfish, their power status, and the CAPMC v1 front,
// behind the HMS PCS REST API (routes with and without /v1).
package main

import (
	"context"
	"io"
	"os"

	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/power"
)

func main() { cli.Main("pcs", run) }

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	f := cli.NewFlagSet("pcs", getenv, stdout)
	fl := power.RegisterFlags(f)
	af := auth.RegisterFlags(f)
	if err := f.ParseOrUsage(args); err != nil {
		return err
	}
	cfg, err := fl.Config()
	if err != nil {
		return err
	}
	if cfg.Auth, err = af.Config(power.AuthTable()); err != nil {
		return err
	}
	cfg.Log = cli.NewLogger(os.Stderr, *fl.Level)
	d, err := power.StartDaemon(ctx, cfg)
	if err != nil {
		return err
	}
	return d.Run(ctx)
}
