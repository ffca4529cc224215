package layout

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/sqldb"
)

// DaemonConfig is what a whole sls needs: cmd/sls fills it from its flags,
// `hms up` from its own.
type DaemonConfig struct {
	// Listen is the address to bind (":0" picks a free port).
	Listen string
	// DB is the SQLite file, or a postgres:// URL (sqldb.Open).
	DB string
	// DumpLimit caps a /loadstate body in bytes; 0 means DefaultDumpLimit.
	DumpLimit int64
	// RedactExtraProperties names ExtraProperties keys answered as "" (see
	// Store.SetRedactedProperties); empty keeps HMS's behaviour.
	RedactExtraProperties []string
	// MaxConns caps open connections; 0 means httpserver.DefaultMaxConns.
	MaxConns int
	// Auth says how callers' tokens are checked (zero: not at all).
	Auth auth.Config
	Log  *slog.Logger
}

// Daemon is an sls with its database open and its port bound. Run it, or
// Close it if it will not be run.
type Daemon struct {
	store *Store
	srv   *httpserver.Server
}

// StartDaemon opens the database and binds the port.
func StartDaemon(ctx context.Context, cfg DaemonConfig) (*Daemon, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	// Loading a large layout takes a while; say so, and how long it took.
	cfg.Log.Info("database_loading", "path", sqldb.Display(cfg.DB))
	t0 := time.Now()
	store, err := OpenStore(ctx, cfg.DB, nil)
	if err != nil {
		return nil, err
	}
	cfg.Log.Info("database_loaded", "path", sqldb.Display(cfg.DB), "took", time.Since(t0).Round(time.Millisecond))
	store.SetRedactedProperties(cfg.RedactExtraProperties)
	reg := httpserver.NewRegistry()
	api := NewAPI(store, cfg.Log, reg)
	if cfg.DumpLimit > 0 {
		api.DumpLimit = cfg.DumpLimit
	}
	ad, err := cfg.Auth.NewDaemon(AuthTable(), cfg.Log, reg)
	if err != nil {
		store.Close()
		return nil, err
	}
	h := ad.Wrap(api.Handler())
	srv, err := httpserver.Listen(cfg.Listen, httpserver.WithPrefixes(h, GatewayPrefixes()...), cfg.Log, reg)
	if err != nil {
		store.Close()
		return nil, err
	}
	ad.Configure(srv)
	if cfg.MaxConns > 0 {
		srv.MaxConns = cfg.MaxConns
	}
	return &Daemon{store: store, srv: srv}, nil
}

// URL is the base URL the daemon serves on.
func (d *Daemon) URL() string { return d.srv.URL() }

// Run serves until ctx is cancelled, then shuts down gracefully and closes
// the database.
func (d *Daemon) Run(ctx context.Context) error {
	err := d.srv.Run(ctx)
	return errors.Join(err, d.store.Close())
}

// Close releases a daemon that was started but will not be run.
func (d *Daemon) Close() error { return errors.Join(d.srv.Close(), d.store.Close()) }

// GatewayPrefixes are the paths the CSM API gateway serves this daemon
// under (/apis/sls/v1); the daemon answers them too, so CSM clients can
// be pointed straight at it.
func GatewayPrefixes() []httpserver.Prefix {
	return []httpserver.Prefix{{Gateway: "/apis/sls" + Base, Base: Base}}
}
