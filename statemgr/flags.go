package statemgr

import (
	"encoding/json"
	"log/slog"
	"os"
	"time"

	"github.com/hmsuite/hms/internal/auth/token"
	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/statemgr/internal/core"
	"github.com/hmsuite/hms/statemgr/inventory"
)

// DaemonFlags are the hsm daemon's flags, declared once for both the hsm binary and
// `hms up` (which declares them on f.Sub("hsm"): -hsm-discovery-workers,
// HMS_HSM_DISCOVERY_WORKERS).
type DaemonFlags struct {
	f                             *cli.FlagSet
	listen, db, slsURL, topic     *string
	hbtdURL                       *string
	credKey, caBundle, hmsConfig  *string
	retention, reap, walkTimeout  *time.Duration
	deadAfter                     *time.Duration
	workers, maxConns, burstWalks *int
	history                       *int
	historyAge                    *time.Duration
	plainHTTP                     *bool
	scnToken                      *token.Flags
	scnHosts                      *string
	// Brokers is -kafka-brokers (empty: no Kafka); Level is -log-level.
	Brokers *[]string
	Level   *slog.Level
}

// RegisterFlags declares hsm's flags on f; getenv supplies the default of
// -hms-config, $HMS_CONFIG_PATH, as shipped HMS reads it.
func RegisterFlags(f *cli.FlagSet, getenv func(string) string) *DaemonFlags {
	return &DaemonFlags{f: f,
		listen: f.Listen(":27779"), Level: f.LogLevel(),
		db:     f.DBOrURL("./hsm.db"),
		slsURL: f.URL("sls-url", "", "SLS base `URL` for node NID/Role defaults (empty: NodeMaps only)"),
		hbtdURL: f.URL("hbtd-url", "",
			"hbtd base `URL`: a node that turns On (a walk found it powered) is set Ready if hbtd says it heartbeats, as HMS does after a walk (empty: not checked)"),
		Brokers:   f.Brokers(),
		topic:     f.String("scn-topic", bus.TopicSCN, "Kafka `TOPIC` SCNs are published to"),
		retention: f.Seconds("scn-retention", 24*time.Hour, "how long an SCN a consumer has not taken is kept, in `SECONDS`"),
		deadAfter: f.Seconds("scn-dead-after", 24*time.Hour,
			"an SCN subscription of this suite's daemons (agent@host:port, which subscribe again) whose callback has failed every post for this many `SECONDS` is deleted, with its place in the outbox; other subscribers are kept, as in HSM"),
		reap:    f.Seconds("reservation-reap", 30*time.Second, "how often expired reservations are removed, in `SECONDS`"),
		credKey: f.String("cred-key-file", "./hsm-cred.key", "`FILE` with the key that encrypts BMC credentials (created, mode 0600, if absent)"),
		workers: f.Int("discovery-workers", 32, "how many BMCs are walked at once (at least 1)"),
		burstWalks: f.Int("discovery-burst-walks", 4,
			"how many BMCs are walked at once within 1 s of a RedfishEndpoint registration while HSM is short of CPU, so a burst of new BMCs is registered first (-1: no cap)"),
		walkTimeout: f.Seconds("discovery-timeout", 30*time.Second, "time limit of the walk of one BMC, in `SECONDS`"),
		caBundle:    f.String("bmc-ca-bundle", "", "PEM `FILE` of CAs BMC certificates are checked against (empty: not checked)"),
		plainHTTP:   f.Bool("bmc-http", false, "reach BMCs over plain HTTP instead of HTTPS"),
		maxConns:    f.MaxConnections(httpserver.DefaultMaxConns),
		scnToken:    token.RegisterAs(f, "scn-token", "sent with the SCN callbacks to subscribers on this host and on -scn-token-hosts (a token with the scn role, which may only POST to SCN receivers); without it the -token goes to subscribers on this host only"),
		scnHosts:    f.String("scn-token-hosts", "", "`HOST,...` besides this one whose SCN callbacks carry -scn-token (bss, hmnfd, bos on other hosts); never list node addresses: a subscriber picks its URL, and the token lets its holder post SCNs"),
		hmsConfig: f.String("hms-config", getenv("HMS_CONFIG_PATH"),
			"hms_config.json `FILE` with site Roles and SubRoles (HMSExtendedDefinitions), re-read when it changes (default $HMS_CONFIG_PATH)"),
		history: f.Int("state-history", DefaultStateHistory,
			"how many component State and Flag changes are kept for GET /State/Components/History, newest first (0: none, and none recorded)"),
		historyAge: f.Seconds("state-history-age", DefaultStateHistoryAge,
			"component State and Flag changes older than this many `SECONDS` are dropped (0: no age limit)"),
	}
}

// Config checks the parsed flags, the files they name and that the listen
// port is free, and returns the daemon's configuration (Publisher and Log are
// the caller's to set). Errors are *cli.UsageError, found before any file is
// created.
func (fl *DaemonFlags) Config() (DaemonConfig, error) {
	if *fl.burstWalks == 0 || *fl.burstWalks < -1 {
		return DaemonConfig{}, cli.Usagef("-%s %d: at least 1, or -1 for no cap", fl.f.Name("discovery-burst-walks"), *fl.burstWalks)
	}
	if *fl.history < 0 || *fl.historyAge < 0 {
		return DaemonConfig{}, cli.Usagef("-%s %d, -%s %v: must not be negative", fl.f.Name("state-history"), *fl.history,
			fl.f.Name("state-history-age"), *fl.historyAge)
	}
	if *fl.workers < 1 {
		return DaemonConfig{}, cli.Usagef("-%s %d: at least 1 BMC must be walked at a time", fl.f.Name("discovery-workers"), *fl.workers)
	}
	if err := cli.CheckFile(fl.f.Name("bmc-ca-bundle"), *fl.caBundle); err != nil {
		return DaemonConfig{}, err
	}
	if err := fl.checkHMSConfig(); err != nil {
		return DaemonConfig{}, err
	}
	if err := cli.CheckListen(fl.f.Name("listen"), *fl.listen); err != nil {
		return DaemonConfig{}, err
	}
	scn, err := fl.scnToken.Config()
	if err != nil {
		return DaemonConfig{}, err
	}
	return DaemonConfig{Listen: *fl.listen, DB: *fl.db, SLSURL: *fl.slsURL, HBTDURL: *fl.hbtdURL, Topic: *fl.topic, SCNToken: scn, SCNTokenHosts: cli.SplitList(*fl.scnHosts),
		Retention: *fl.retention, SCNDeadAfter: *fl.deadAfter, Reap: *fl.reap, CredKeyFile: *fl.credKey,
		StateHistory: orNone(*fl.history), StateHistoryAge: orNone(*fl.historyAge),
		Discovery: inventory.DiscoveryConfig{Workers: *fl.workers, Timeout: *fl.walkTimeout, PlainHTTP: *fl.plainHTTP,
			BurstWalks: *fl.burstWalks},
		CABundle: *fl.caBundle, HMSConfig: *fl.hmsConfig, MaxConns: *fl.maxConns}, nil
}

// checkHMSConfig refuses an -hms-config that is missing or not JSON; once
// running, a file that stops parsing is logged and the values in force kept.
func (fl *DaemonFlags) checkHMSConfig() error {
	name := fl.f.Name("hms-config")
	if err := cli.CheckFile(name, *fl.hmsConfig); err != nil || *fl.hmsConfig == "" {
		return err
	}
	b, err := os.ReadFile(*fl.hmsConfig)
	if err != nil {
		return cli.Usagef("-%s: %v", name, err)
	}
	if err := json.Unmarshal(b, new(core.HMSConfig)); err != nil {
		return cli.Usagef("-%s %s: %v", name, *fl.hmsConfig, err)
	}
	return nil
}

// orNone maps a flag's 0 ("none", "no limit") to DaemonConfig's -1, whose 0
// means the default.
func orNone[T int | time.Duration](v T) T {
	if v == 0 {
		return -1
	}
	return v
}
