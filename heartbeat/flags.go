package heartbeat

import (
	"log/slog"
	"time"

	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/httpserver"
)

// DaemonFlags are the hbtd daemon's flags, declared once for both the hbtd
// binary and `hms up` (which declares them on f.Sub("hbtd"): -hbtd-errtime,
// HMS_HBTD_ERRTIME).
type DaemonFlags struct {
	f                    *cli.FlagSet
	listen, db, hsmURL   *string
	scnIn                *string
	warn, errt, interval *time.Duration
	maxConns             *int
	// Brokers is -kafka-brokers (empty: no Kafka); Level is -log-level.
	Brokers *[]string
	Level   *slog.Level
}

// RegisterFlags declares hbtd's flags on f.
func RegisterFlags(f *cli.FlagSet) *DaemonFlags {
	return &DaemonFlags{f: f,
		listen: f.Listen(":28500"), Level: f.LogLevel(),
		db:     f.DBOrURL("./hbtd.db"),
		hsmURL: f.URL("hsm-url", "http://127.0.0.1:27779", "HSM base `URL` (/hsm/v2 is appended)"),
		scnIn: f.URL("scn-in-url", "", "`URL` HSM posts SCNs to, telling hbtd of nodes powered off or on "+
			"(default http://<hostname>:<port>/hmi/v1/scn, loopback when HSM is)"),
		warn:     f.Seconds("warntime", 10*time.Second, "`SECONDS` of silence before a node is reported as maybe dead"),
		errt:     f.Seconds("errtime", 30*time.Second, "`SECONDS` of silence before a node is declared dead"),
		interval: f.Seconds("interval", 5*time.Second, "`SECONDS` reported as the Interval parameter (kept for compatibility)"),
		Brokers:  f.Brokers(),
		maxConns: f.MaxConnections(httpserver.DefaultMaxConns),
	}
}

// Config checks the parsed flags and that the listen port is free, and
// returns the address to listen on and the tracker's Options (Publisher, Log
// and LogLevel are the caller's to set). Errors are *cli.UsageError.
func (fl *DaemonFlags) Config() (string, Options, error) {
	// The same check PATCH /params applies, so a value refused there is
	// refused here too.
	if err := CheckTimers(Timers{Warntime: *fl.warn, Errtime: *fl.errt, Interval: *fl.interval, SmTimeout: DefaultSmTimeout}); err != nil {
		return "", Options{}, cli.Usagef("-%s, -%s, -%s: %w", fl.f.Name("warntime"), fl.f.Name("errtime"), fl.f.Name("interval"), err)
	}
	if err := cli.CheckListen(fl.f.Name("listen"), *fl.listen); err != nil {
		return "", Options{}, err
	}
	return *fl.listen, Options{DBPath: *fl.db, HSMURL: *fl.hsmURL, SCNInURL: *fl.scnIn, Warntime: *fl.warn, Errtime: *fl.errt, Interval: *fl.interval,
		MaxConns: *fl.maxConns}, nil
}
