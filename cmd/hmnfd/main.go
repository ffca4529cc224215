// Command hmnfd is the notification fanout daemon: it delivers HSM state-change
// notifications to subscribers, durably and in order per subscriber.
package main

import (
	"context"
	"io"
	"log/slog"
	"os"

	"github.com/hmsuite/hms/fanout"
	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/cli"
)

func main() { cli.Main("hmnfd", run) }

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	f := cli.NewFlagSet("hmnfd", getenv, stdout)
	fl := fanout.RegisterFlags(f)
	af := auth.RegisterFlags(f)
	if err := f.ParseOrUsage(args); err != nil {
		return err
	}
	dc, err := fl.Config()
	if err != nil {
		return err
	}
	if dc.Auth, err = af.Config(fanout.AuthTable()); err != nil {
		return err
	}
	dc.LogLevel = new(slog.LevelVar)
	dc.LogLevel.Set(*fl.Level)
	dc.Log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: dc.LogLevel}))
	if len(*fl.Brokers) > 0 {
		kb, err := bus.NewKafka(bus.KafkaConfig{Brokers: *fl.Brokers, ClientID: "hmnfd", Log: dc.Log})
		if err != nil {
			return err
		}
		defer kb.Close()
		dc.Bus = kb
	}
	d, err := fanout.StartDaemon(ctx, dc)
	if err != nil {
		return err
	}
	return d.Run(ctx)
}
