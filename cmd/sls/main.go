// Command sls is the System Layout Service: the intended layout of the cluster
// (hardware, cabling, networks) behind the HMS SLS REST API on /v1.
package main

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/layout"
)

func main() { cli.Main("sls", run) }

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	f := cli.NewFlagSet("sls", getenv, stdout)
	listen, dbPath, level := f.Listen(":8376"), f.DB("./sls.db"), f.LogLevel()
	dumpLimit := f.Int64("max-dump-bytes", layout.DefaultDumpLimit, "largest /loadstate upload accepted, in bytes")
	if err := f.ParseOrUsage(args); err != nil {
		return err
	}
	if *dumpLimit <= 0 {
		return &cli.UsageError{Err: errors.New("-max-dump-bytes must be positive")}
	}
	d, err := layout.StartDaemon(ctx, layout.DaemonConfig{Listen: *listen, DB: *dbPath, DumpLimit: *dumpLimit,
		Log: cli.NewLogger(os.Stderr, *level)})
	if err != nil {
		return err
	}
	return d.Run(ctx)
}
