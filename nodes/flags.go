package nodes

import (
	"log/slog"
	"time"

	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/httpserver"
)

// DaemonFlags are the nodes daemon's flags, declared once for the nodes
// binary and for `hms up` (on f.Sub("nodes"): -nodes-hsm-url,
// HMS_NODES_HSM_URL).
type DaemonFlags struct {
	f                                  *cli.FlagSet
	listen, db, credKey, sls, hsm, bss *string
	hbtd                               *string
	timeout                            *time.Duration
	workers, maxConns                  *int
	// Level is -log-level.
	Level *slog.Level
}

// RegisterFlags declares the nodes daemon's flags on f.
func RegisterFlags(f *cli.FlagSet) *DaemonFlags {
	return &DaemonFlags{f: f,
		listen: f.Listen(":27780"), db: f.DBOrURL("./nodes.db"), Level: f.LogLevel(),
		credKey:  f.String("cred-key-file", "./nodes-cred.key", "`FILE` with the key that seals BMC credentials (created, mode 0600, if absent)"),
		sls:      f.URL("sls-url", "", "SLS base `URL` (required): node, BMC and parent hardware"),
		hsm:      f.URL("hsm-url", "", "HSM base `URL` (required): components, Ethernet interfaces, Redfish endpoints, groups"),
		bss:      f.URL("bss-url", "", "BSS base `URL` (required): boot parameters and cloud-init"),
		hbtd:     f.URL("hbtd-url", "", "hbtd base `URL` (optional): last heartbeats shown beside a node"),
		timeout:  f.Duration("peer-timeout", 60*time.Second, "give up on one request to a service after `DURATION`"),
		workers:  f.Int("workers", 8, "at most `N` requests in flight to one service during an apply"),
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
	if *fl.workers < 1 {
		return DaemonConfig{}, cli.Usagef("-%s must be at least 1", fl.f.Name("workers"))
	}
	if err := cli.CheckListen(fl.f.Name("listen"), *fl.listen); err != nil {
		return DaemonConfig{}, err
	}
	return DaemonConfig{Listen: *fl.listen, DB: *fl.db, CredKeyFile: *fl.credKey, SLSURL: *fl.sls, HSMURL: *fl.hsm,
		BSSURL: *fl.bss, HBTDURL: *fl.hbtd, PeerTimeout: *fl.timeout, Workers: *fl.workers, MaxConns: *fl.maxConns}, nil
}
