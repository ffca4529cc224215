package layout

import (
	"log/slog"

	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/httpserver"
)

// DaemonFlags are the sls daemon's flags, declared once for both the sls binary and
// `hms up` (which declares them on f.Sub("sls"): -sls-listen, HMS_SLS_LISTEN).
type DaemonFlags struct {
	f         *cli.FlagSet
	listen    *string
	db        *string
	dumpLimit *int64
	redact    *string
	maxConns  *int
	// Level is -log-level.
	Level *slog.Level
}

// RegisterFlags declares sls's flags on f.
func RegisterFlags(f *cli.FlagSet) *DaemonFlags {
	return &DaemonFlags{f: f, listen: f.Listen(":8376"), Level: f.LogLevel(),
		db:        f.DBOrURL("./sls.db"),
		dumpLimit: f.Int64("max-dump-bytes", DefaultDumpLimit, "largest /loadstate upload accepted, in bytes"),
		redact: f.String("redact-extra-properties", "",
			`comma-separated ExtraProperties keys (e.g. Password,SNMPAuthPassword) answered as "" in hardware reads and /dumpstate; stored data is unchanged`),
		maxConns: f.MaxConnections(httpserver.DefaultMaxConns)}
}

// Config checks the parsed flags, and that the listen port is free, and
// returns the daemon's configuration (Log is the caller's to set). Errors are
// *cli.UsageError.
func (fl *DaemonFlags) Config() (DaemonConfig, error) {
	if *fl.dumpLimit <= 0 {
		return DaemonConfig{}, cli.Usagef("-%s must be positive", fl.f.Name("max-dump-bytes"))
	}
	if err := cli.CheckListen(fl.f.Name("listen"), *fl.listen); err != nil {
		return DaemonConfig{}, err
	}
	return DaemonConfig{Listen: *fl.listen, DB: *fl.db, DumpLimit: *fl.dumpLimit,
		RedactExtraProperties: cli.SplitList(*fl.redact), MaxConns: *fl.maxConns}, nil
}
