package power

import (
	"log/slog"
	"time"

	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/httpserver"
)

// DaemonFlags are pcs's flags, declared once for the pcs binary and for
// `hms up` (on f.Sub("pcs"): -pcs-sample-interval, HMS_PCS_SAMPLE_INTERVAL).
type DaemonFlags struct {
	f                          *cli.FlagSet
	listen, db, hsmURL, creds  *string
	bmcHTTP                    *bool
	sample, ttl, timeout, poll *time.Duration
	maxKept, perBMC, requests  *int
	maxConns                   *int
	// Level is -log-level.
	Level *slog.Level
}

// RegisterFlags declares pcs's flags on f.
func RegisterFlags(f *cli.FlagSet) *DaemonFlags {
	return &DaemonFlags{f: f,
		listen: f.Listen(":28007"), db: f.DBOrURL("./pcs.db"), Level: f.LogLevel(),
		hsmURL:   f.URL("hsm-url", "", "HSM base `URL` (required): components, Redfish endpoints, reservations"),
		creds:    f.String("bmc-credentials", "", "JSON `FILE` of BMC logins by BMC xname (mode 0600): its entries override the logins read from HSM (which needs pcs to hold an admin token), \"default\" serves BMCs HSM has none for"),
		bmcHTTP:  f.Bool("bmc-http", false, "reach BMCs over plain HTTP (simulators only)"),
		sample:   f.Duration("sample-interval", 30*time.Second, "refresh the power-status cache every `DURATION`"),
		ttl:      f.Duration("transition-ttl", 24*time.Hour, "keep a finished transition for `DURATION`"),
		timeout:  f.Duration("bmc-timeout", 30*time.Second, "give up on one BMC request after `DURATION`"),
		poll:     f.Duration("confirm-interval", 2*time.Second, "read the power state back every `DURATION` until a transition is confirmed"),
		maxKept:  f.Int("max-transitions", 20000, "keep at most `N` finished transitions"),
		perBMC:   f.Int("bmc-concurrency", 4, "at most `N` requests in flight to one BMC"),
		requests: f.Int("max-requests", 4000, "at most `N` BMC requests in flight overall"),
		maxConns: f.MaxConnections(httpserver.DefaultMaxConns),
	}
}

// Config checks the parsed flags and that the listen port is free, and
// returns the daemon's configuration (Log is the caller's to set). Errors
// are *cli.UsageError.
func (fl *DaemonFlags) Config() (DaemonConfig, error) {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"sample-interval", *fl.sample}, {"transition-ttl", *fl.ttl}, {"bmc-timeout", *fl.timeout}, {"confirm-interval", *fl.poll}} {
		if d.v <= 0 {
			return DaemonConfig{}, cli.Usagef("-%s must be positive", fl.f.Name(d.name))
		}
	}
	for _, n := range []struct {
		name string
		v    int
	}{{"max-transitions", *fl.maxKept}, {"bmc-concurrency", *fl.perBMC}, {"max-requests", *fl.requests}} {
		if n.v < 1 {
			return DaemonConfig{}, cli.Usagef("-%s must be at least 1", fl.f.Name(n.name))
		}
	}
	if err := cli.CheckListen(fl.f.Name("listen"), *fl.listen); err != nil {
		return DaemonConfig{}, err
	}
	scheme := "https"
	if *fl.bmcHTTP {
		scheme = "http"
	}
	return DaemonConfig{Listen: *fl.listen, DB: *fl.db, HSMURL: *fl.hsmURL, CredentialsFile: *fl.creds,
		BMCTimeout: *fl.timeout, PerBMC: *fl.perBMC, MaxRequests: *fl.requests, MaxConns: *fl.maxConns,
		Service: Config{TTL: *fl.ttl, MaxKept: *fl.maxKept, Poll: *fl.poll, SampleInterval: *fl.sample, Scheme: scheme}}, nil
}
