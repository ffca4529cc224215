// Command hbtd is the heartbeat tracker: nodes POST heartbeats to it, and it
// tells HSM when they start, stop and come back.
package main

import (
	"context"
	"io"
	"log/slog"
	"os"

	"github.com/hmsuite/hms/heartbeat"
	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/cli"
)

func main() { cli.Main("hbtd", run) }

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	f := cli.NewFlagSet("hbtd", getenv, stdout)
	fl := heartbeat.RegisterFlags(f)
	af := auth.RegisterFlags(f)
	if err := f.ParseOrUsage(args); err != nil {
		return err
	}
	listen, o, err := fl.Config()
	if err != nil {
		return err
	}
	if o.Auth, err = af.Config(heartbeat.AuthTable()); err != nil {
		return err
	}
	o.LogLevel = new(slog.LevelVar)
	o.LogLevel.Set(*fl.Level)
	o.Log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: o.LogLevel}))
	var pub bus.Bus = bus.NewUnread() // standalone, nobody consumes it
	if len(*fl.Brokers) > 0 {
		k, err := bus.NewKafka(bus.KafkaConfig{Brokers: *fl.Brokers, ClientID: "hbtd", Log: o.Log})
		if err != nil {
			return err
		}
		pub = k
	}
	defer pub.Close()
	o.Publisher = pub
	d, err := heartbeat.StartDaemon(ctx, listen, o)
	if err != nil {
		return err
	}
	return d.Run(ctx)
}
