package ipxe

import (
	"log/slog"
	"net/netip"
	"time"

	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/httpserver"
)

// DaemonFlags are the bss daemon's flags, declared once for both the bss
// binary and `hms up` (which declares them on f.Sub("bss"): -bss-advertise-url,
// HMS_BSS_ADVERTISE_URL).
type DaemonFlags struct {
	f                                    *cli.FlagSet
	listen, db, hsmURL, advertise, inURL *string
	resync, retry, retrieval             *time.Duration
	maxConns                             *int
	trusted                              *[]netip.Prefix
	// Level is -log-level.
	Level *slog.Level
}

// RegisterFlags declares bss's flags on f.
func RegisterFlags(f *cli.FlagSet) *DaemonFlags {
	return &DaemonFlags{f: f,
		listen: f.Listen(":27778"), db: f.DB("./bss.db"), Level: f.LogLevel(),
		hsmURL:    f.URL("hsm-url", "", "HSM base `URL`; its nodes, MACs, IPs and roles are cached and kept fresh by SCNs"),
		advertise: f.URL("advertise-url", "", "base `URL` nodes reach bss on, put into chain URLs and ds= (default this daemon's URL)"),
		inURL:     f.URL("scn-in-url", "", "`URL` HSM posts SCNs to (default http://<hostname>:<port>/boot/v1/scn, loopback when HSM is)"),
		resync:    f.Duration("hsm-resync", 5*time.Minute, "re-read all of HSM every `DURATION` (SCNs keep the cache fresh in between)"),
		retry:     f.Duration("retry-delay", 30*time.Second, "sleep before a failed boot chains back (`DURATION`, whole seconds)"),
		retrieval: f.Duration("retrieval-delay", 10*time.Second, "sleep before an unknown node chains back with its architecture (`DURATION`)"),
		maxConns:  f.MaxConnections(httpserver.DefaultMaxConns),
		trusted:   f.Prefixes("trusted-proxies", "reverse proxies (`CIDR,...`) whose X-Forwarded-For names the cloud-init caller; default none: the peer address decides whose meta-data it gets"),
	}
}

// Config checks the parsed flags and that the listen port is free, and
// returns the daemon's configuration (Log is the caller's to set). Errors
// are *cli.UsageError.
func (fl *DaemonFlags) Config() (DaemonConfig, error) {
	if *fl.resync <= 0 || *fl.retry < time.Second || *fl.retrieval < time.Second {
		return DaemonConfig{}, cli.Usagef("-%s must be positive; -%s and -%s at least 1s",
			fl.f.Name("hsm-resync"), fl.f.Name("retry-delay"), fl.f.Name("retrieval-delay"))
	}
	if err := cli.CheckListen(fl.f.Name("listen"), *fl.listen); err != nil {
		return DaemonConfig{}, err
	}
	return DaemonConfig{Listen: *fl.listen, DB: *fl.db, HSMURL: *fl.hsmURL, AdvertiseURL: *fl.advertise,
		ScnInURL: *fl.inURL, Resync: *fl.resync, RetryDelay: *fl.retry, RetrievalDelay: *fl.retrieval,
		MaxConns: *fl.maxConns, TrustedProxies: *fl.trusted}, nil
}
