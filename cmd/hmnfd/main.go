// Command hmnfd is the notification fanout daemon: it delivers HSM state-change
// notifications to subscribers, durably and in order per subscriber.
package main

import (
	"context"
	"io"
	"log/slog"
	"os"

	"github.com/hmsuite/hms/fanout"
	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/cli"
)

func main() { cli.Main("hmnfd", run) }

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	f := cli.NewFlagSet("hmnfd", getenv, stdout)
	listen, dbPath, level := f.Listen(":28600"), f.DB("./hmnfd.db"), f.LogLevel()
	hsmURL := f.URL("hsm-url", "", "HSM base `URL`; without Kafka, hmnfd subscribes to its SCN callbacks")
	inURL := f.URL("scn-in-url", "", "`URL` HSM posts SCNs to in callback mode (default http://<hostname>:<port>/hmi/v1/scn)")
	brokers := f.Brokers()
	topic := f.String("scn-topic", bus.TopicSCN, "Kafka `TOPIC` HSM publishes SCNs on")
	group := f.String("group", "hmnfd", "Kafka consumer `GROUP` shared by hmnfd replicas")
	cfg := fanout.DefaultConfig()
	f.DurationVar(&cfg.RetentionAge, "retention-age", cfg.RetentionAge, "expire a failing subscriber whose oldest undelivered SCN is older than `DURATION`")
	f.IntVar(&cfg.RetentionCount, "retention-count", cfg.RetentionCount, "expire a failing subscriber with more than `N` undelivered SCNs")
	f.IntVar(&cfg.BatchMax, "batch-max", cfg.BatchMax, "most consecutive same-attribute SCNs in one POST (1: no batching)")
	f.DurationVar(&cfg.Timeout, "send-timeout", cfg.Timeout, "per-delivery request `DURATION`")
	f.DurationVar(&cfg.RetryMin, "retry-min", cfg.RetryMin, "first retry backoff `DURATION`")
	f.DurationVar(&cfg.RetryMax, "retry-max", cfg.RetryMax, "longest retry backoff `DURATION`")
	f.IntVar(&cfg.MaxInFlight, "max-inflight", cfg.MaxInFlight, "most concurrent delivery requests")
	f.IntVar(&cfg.MetricSubscribers, "metric-subscribers", cfg.MetricSubscribers, "subscriber URLs with their own metric label; the rest share \"other\"")
	if err := f.ParseOrUsage(args); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return &cli.UsageError{Err: err}
	}
	lv := new(slog.LevelVar)
	lv.Set(*level)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lv}))
	dc := fanout.DaemonConfig{Listen: *listen, DB: *dbPath, Delivery: cfg, Topic: *topic, Group: *group,
		Brokers: *brokers, HSMURL: *hsmURL, ScnInURL: *inURL, Log: log, LogLevel: lv}
	if len(*brokers) > 0 {
		kb, err := bus.NewKafka(bus.KafkaConfig{Brokers: *brokers, ClientID: "hmnfd", Log: log})
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
