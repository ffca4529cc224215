// Command hbtd is the heartbeat tracker: nodes POST heartbeats to it, and it
// tells HSM when they start, stop and come back.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/hmsuite/hms/heartbeat"
	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/cli"
)

func main() { cli.Main("hbtd", run) }

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	f := cli.NewFlagSet("hbtd", getenv, stdout)
	listen, dbPath, level := f.Listen(":28500"), f.DB("./hbtd.db"), f.LogLevel()
	hsmURL := f.URL("hsm-url", "http://127.0.0.1:27779", "HSM base `URL` (/hsm/v2 is appended)")
	warn := f.Seconds("warntime", 10*time.Second, "`SECONDS` of silence before a node is reported as maybe dead")
	errt := f.Seconds("errtime", 30*time.Second, "`SECONDS` of silence before a node is declared dead")
	interval := f.Seconds("interval", 5*time.Second, "`SECONDS` reported as the Interval parameter (kept for compatibility)")
	brokers := f.Brokers()
	if err := f.ParseOrUsage(args); err != nil {
		return err
	}
	// The same check PATCH /params applies, so a value refused there is
	// refused here too.
	if err := heartbeat.CheckTimers(heartbeat.Timers{Warntime: *warn, Errtime: *errt, Interval: *interval, SmTimeout: heartbeat.DefaultSmTimeout}); err != nil {
		return &cli.UsageError{Err: fmt.Errorf("-warntime, -errtime, -interval: %w", err)}
	}
	lv := new(slog.LevelVar)
	lv.Set(*level)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lv}))
	var pub bus.Bus = bus.NewUnread() // standalone, nobody consumes it
	if len(*brokers) > 0 {
		k, err := bus.NewKafka(bus.KafkaConfig{Brokers: *brokers, ClientID: "hbtd", Log: log})
		if err != nil {
			return err
		}
		pub = k
	}
	defer pub.Close()
	d, err := heartbeat.StartDaemon(ctx, *listen, heartbeat.Options{
		DBPath: *dbPath, HSMURL: *hsmURL, Publisher: pub, Warntime: *warn, Errtime: *errt,
		Interval: *interval, Log: log, LogLevel: lv,
	})
	if err != nil {
		return err
	}
	return d.Run(ctx)
}
