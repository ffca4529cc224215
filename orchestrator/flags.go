package orchestrator

import (
	"log/slog"
	"time"

	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/httpserver"
)

// DaemonFlags are bos's flags, declared once for the bos binary and for
// `hms up` (on f.Sub("bos"): -bos-hsm-url, HMS_BOS_HSM_URL).
type DaemonFlags struct {
	f                                         *cli.FlagSet
	listen, db, hsm, bss, pcs, s3, scnIn, cfs *string
	timeout, fallback                         *time.Duration
	maxConns                                  *int
	// Level is -log-level.
	Level *slog.Level
}

// RegisterFlags declares bos's flags on f.
func RegisterFlags(f *cli.FlagSet) *DaemonFlags {
	return &DaemonFlags{f: f,
		listen: f.Listen(":9000"), db: f.DB("./bos.db"), Level: f.LogLevel(),
		hsm:      f.URL("hsm-url", "", "HSM base `URL` (required): nodes, groups, roles and their state"),
		bss:      f.URL("bss-url", "", "BSS base `URL` (required): boot parameters and boot-script history"),
		pcs:      f.URL("pcs-url", "", "PCS base `URL` (required): power transitions and power status"),
		cfs:      f.URL("cfs-url", "", "CFS v3 base `URL` that configures nodes (empty: no configuration step; a booted node counts as configured)"),
		s3:       f.URL("s3-endpoint", "", "HTTP(S) `URL` s3://bucket/key manifest paths are read from (path-style, unsigned)"),
		timeout:  f.Duration("peer-timeout", 20*time.Second, "give up on one request to HSM, BSS, PCS or a manifest after `DURATION`"),
		scnIn:    f.URL("scn-in-url", "", "`URL` HSM posts SCNs to (default http://<hostname>:<port>/v2/scn, loopback when HSM is)"),
		fallback: f.Duration("fallback-poll", time.Minute, "while HSM sends SCNs, run the operators at least every `DURATION` (polling_frequency until it does)"),
		maxConns: f.MaxConnections(httpserver.DefaultMaxConns),
	}
}

// Config checks the parsed flags and that the listen port is free, and
// returns the daemon's configuration (Log is the caller's to set). Errors
// are *cli.UsageError. Peer URLs may be empty here: `hms up` fills them.
func (fl *DaemonFlags) Config() (DaemonConfig, error) {
	if *fl.timeout <= 0 {
		return DaemonConfig{}, cli.Usagef("-%s must be positive", fl.f.Name("peer-timeout"))
	}
	if *fl.fallback <= 0 {
		return DaemonConfig{}, cli.Usagef("-%s must be positive", fl.f.Name("fallback-poll"))
	}
	if err := cli.CheckListen(fl.f.Name("listen"), *fl.listen); err != nil {
		return DaemonConfig{}, err
	}
	return DaemonConfig{Listen: *fl.listen, DB: *fl.db, HSMURL: *fl.hsm, BSSURL: *fl.bss, PCSURL: *fl.pcs,
		S3Endpoint: *fl.s3, CFSURL: *fl.cfs, SCNInURL: *fl.scnIn, FallbackPoll: *fl.fallback, PeerTimeout: *fl.timeout,
		MaxConns: *fl.maxConns}, nil
}
