package nodes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/sealed"
)

// DaemonConfig is what a whole nodes daemon needs: cmd/nodes fills it from
// its flags, `hms up` from its own.
type DaemonConfig struct {
	// Listen is the address to bind (":0" picks a free port).
	Listen string
	// DB is the SQLite file or a postgres:// URL (sqldb.Open); CredKeyFile
	// the key that seals BMC credentials (created if absent).
	DB, CredKeyFile string
	// SLSURL, HSMURL and BSSURL are the services resources are written to
	// (required); HBTDURL, optional, gives the last heartbeats.
	SLSURL, HSMURL, BSSURL, HBTDURL string
	// PeerTimeout bounds one request to a service [60 s]; Workers the
	// requests in flight to one service [8].
	PeerTimeout time.Duration
	Workers     int
	// MaxConns caps the connections the HTTP server holds open; 0 means
	// httpserver.DefaultMaxConns.
	MaxConns int
	// Auth says how callers' tokens are checked, and the token sent to
	// the services.
	Auth auth.Config
	Log  *slog.Logger
}

// Daemon is a nodes daemon with its database open and its port bound. Run
// it, or Close it if it will not be run.
type Daemon struct {
	store *Store
	svc   *Service
	srv   *httpserver.Server
}

// StartDaemon opens the database and the key, and binds the port.
func StartDaemon(ctx context.Context, cfg DaemonConfig) (d *Daemon, err error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.SLSURL == "" || cfg.HSMURL == "" || cfg.BSSURL == "" {
		return nil, errors.New("nodes needs SLS, HSM and BSS: set -sls-url, -hsm-url and -bss-url")
	}
	if cfg.PeerTimeout <= 0 {
		cfg.PeerTimeout = 60 * time.Second
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 8
	}
	box, err := sealed.LoadKey(cfg.CredKeyFile)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	defer func() {
		if err != nil {
			ln.Close()
		}
	}()
	store, err := OpenStore(ctx, cfg.DB)
	if err != nil {
		return nil, err
	}
	hc := cfg.Auth.Client(&http.Client{Timeout: cfg.PeerTimeout, Transport: transport(cfg.Workers)})
	backend := NewServices(ServicesConfig{SLSURL: cfg.SLSURL, HSMURL: cfg.HSMURL, BSSURL: cfg.BSSURL,
		HBTDURL: cfg.HBTDURL, HTTP: hc, Workers: cfg.Workers, Log: cfg.Log})
	svc := New(store, Config{Backend: backend, Box: box, Log: cfg.Log})
	reg := httpserver.NewRegistry()
	ad, err := cfg.Auth.NewDaemon(AuthTable(), cfg.Log, reg)
	if err != nil {
		store.Close()
		return nil, err
	}
	api := ad.Wrap(NewAPI(svc, cfg.Log, store.Ping, backend.Ready).Handler())
	srv := httpserver.Serve(ln, api, cfg.Log, reg)
	ad.Configure(srv)
	if cfg.MaxConns > 0 {
		srv.MaxConns = cfg.MaxConns
	}
	return &Daemon{store: store, svc: svc, srv: srv}, nil
}

// URL is the base URL the daemon serves on.
func (d *Daemon) URL() string { return d.srv.URL() }

// Service is the daemon's service (tests).
func (d *Daemon) Service() *Service { return d.svc }

// Run serves until ctx is cancelled, then shuts down gracefully and
// closes the database.
func (d *Daemon) Run(ctx context.Context) error {
	err := d.srv.Run(ctx)
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		err = nil
	}
	return errors.Join(err, d.store.Close())
}

// Close releases a daemon that was started but will not be run.
func (d *Daemon) Close() error { return errors.Join(d.srv.Close(), d.store.Close()) }

// transport keeps a connection per worker to each service: with the
// default two idle per host, all but two of an apply's concurrent
// requests would each dial, and leave, a connection.
func transport(workers int) *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = 4 * workers
	tr.MaxIdleConnsPerHost = workers
	return tr
}
