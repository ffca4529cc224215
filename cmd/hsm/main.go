// Command hsm is the Hardware State Manager: the HSM v2 API on /hsm/v2 over
// SQLite or PostgreSQL, with the SCN relay that publishes state changes to
// the bus and to /Subscriptions/SCN callbacks, and the reservation reaper.
package main

import (
	"context"
	"io"
	"os"

	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/statemgr"
)

func main() { cli.Main("hsm", run) }

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	f := cli.NewFlagSet("hsm", getenv, stdout)
	fl := statemgr.RegisterFlags(f, getenv)
	af := auth.RegisterFlags(f)
	if err := f.ParseOrUsage(args); err != nil {
		return err
	}
	cfg, err := fl.Config()
	if err != nil {
		return err
	}
	if cfg.Auth, err = af.Config(statemgr.AuthTable()); err != nil {
		return err
	}
	cfg.Log = cli.NewLogger(os.Stderr, *fl.Level)
	var pub bus.Bus = bus.NewUnread() // standalone, nobody consumes it
	if len(*fl.Brokers) > 0 {
		k, err := bus.NewKafka(bus.KafkaConfig{Brokers: *fl.Brokers, ClientID: "hsm", Log: cfg.Log})
		if err != nil {
			return err
		}
		pub = k
	}
	defer pub.Close()
	cfg.Publisher = pub
	d, err := statemgr.StartDaemon(ctx, cfg)
	if err != nil {
		return err
	}
	return d.Run(ctx)
}
