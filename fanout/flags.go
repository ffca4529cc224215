package fanout

import (
	"log/slog"

	"github.com/hmsuite/hms/internal/auth/token"
	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/httpserver"
)

// DaemonFlags are the hmnfd daemon's flags, declared once for both the hmnfd
// binary and `hms up` (which declares them on f.Sub("hmnfd"): -hmnfd-retry-max,
// HMS_HMNFD_RETRY_MAX).
type DaemonFlags struct {
	f                                       *cli.FlagSet
	listen, db, hsmURL, inURL, topic, group *string
	delivery                                Config
	maxConns                                *int
	scnToken                                *token.Flags
	scnHosts                                *string
	// Brokers is -kafka-brokers (empty: no Kafka); Level is -log-level.
	Brokers *[]string
	Level   *slog.Level
}

// RegisterFlags declares hmnfd's flags on f.
func RegisterFlags(f *cli.FlagSet) *DaemonFlags {
	fl := &DaemonFlags{f: f, delivery: DefaultConfig(),
		listen: f.Listen(":28600"), db: f.DBOrURL("./hmnfd.db"), Level: f.LogLevel(),
		hsmURL:   f.URL("hsm-url", "", "HSM base `URL`; without Kafka, hmnfd subscribes to its SCN callbacks"),
		inURL:    f.URL("scn-in-url", "", "`URL` HSM posts SCNs to in callback mode (default http://<hostname>:<port>/hmi/v1/scn)"),
		Brokers:  f.Brokers(),
		topic:    f.String("scn-topic", bus.TopicSCN, "Kafka `TOPIC` HSM publishes SCNs on"),
		group:    f.String("group", "hmnfd", "Kafka consumer `GROUP` shared by hmnfd replicas"),
		maxConns: f.MaxConnections(httpserver.DefaultMaxConns),
		scnToken: token.RegisterAs(f, "scn-token", "sent with deliveries to subscribers on this host and on -scn-token-hosts (a token with the scn role, which may only POST to SCN receivers); empty: deliveries carry no token"),
		scnHosts: f.String("scn-token-hosts", "", "`HOST,...` besides this one whose deliveries carry -scn-token; never list node addresses: a subscriber picks its URL, and the token lets its holder post SCNs"),
	}
	c := &fl.delivery
	f.DurationVar(&c.RetentionAge, "retention-age", c.RetentionAge, "expire a failing subscriber whose oldest undelivered SCN is older than `DURATION`")
	f.IntVar(&c.RetentionCount, "retention-count", c.RetentionCount, "expire a failing subscriber with more than `N` undelivered SCNs")
	f.DurationVar(&c.DeadLetterAge, "deadletter-age", c.DeadLetterAge, "drop dead letters older than `DURATION` (the newest 1,000 are kept at most)")
	f.IntVar(&c.BatchMax, "batch-max", c.BatchMax, "most consecutive same-attribute SCNs in one POST (1: no batching)")
	f.DurationVar(&c.Timeout, "send-timeout", c.Timeout, "per-delivery request `DURATION`")
	f.DurationVar(&c.RetryMin, "retry-min", c.RetryMin, "first retry backoff `DURATION`")
	f.DurationVar(&c.RetryMax, "retry-max", c.RetryMax, "longest retry backoff `DURATION`")
	f.IntVar(&c.MaxInFlight, "max-inflight", c.MaxInFlight, "most concurrent delivery requests")
	f.IntVar(&c.MetricSubscribers, "metric-subscribers", c.MetricSubscribers, "subscriber URLs with their own metric label; the rest share \"other\"")
	return fl
}

// Config checks the parsed flags and that the listen port is free, and
// returns the daemon's configuration (Bus, Log and LogLevel are the caller's
// to set). Errors are *cli.UsageError.
func (fl *DaemonFlags) Config() (DaemonConfig, error) {
	if err := fl.delivery.Validate(); err != nil {
		return DaemonConfig{}, &cli.UsageError{Err: err}
	}
	if err := cli.CheckListen(fl.f.Name("listen"), *fl.listen); err != nil {
		return DaemonConfig{}, err
	}
	scn, err := fl.scnToken.Config()
	if err != nil {
		return DaemonConfig{}, err
	}
	d := fl.delivery
	d.Auth, d.AuthHosts = scn.Source(), cli.SplitList(*fl.scnHosts)
	return DaemonConfig{Listen: *fl.listen, DB: *fl.db, Delivery: d, Topic: *fl.topic, Group: *fl.group,
		Brokers: *fl.Brokers, HSMURL: *fl.hsmURL, ScnInURL: *fl.inURL, MaxConns: *fl.maxConns}, nil
}
