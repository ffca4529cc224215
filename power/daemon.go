package power

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/statemgr/client"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// DaemonConfig is what a whole pcs needs: cmd/pcs fills it from its flags,
// `hms up` from its own.
type DaemonConfig struct {
	// Listen is the address to bind (":0" picks a free port).
	Listen string
	// DB is the SQLite file, or a postgres:// URL (sqldb.Open).
	DB string
	// HSMURL is HSM's base URL (required).
	HSMURL string
	// Credentials, if set, are the BMC logins (tests). Else they are HSM's
	// (see HSMCredentials), with CredentialsFile (see LoadCredentials), if
	// set, overriding them.
	CredentialsFile string
	Credentials     Credentials
	// BMCTimeout bounds one BMC request; PerBMC and MaxRequests bound the
	// requests in flight to one BMC and overall.
	BMCTimeout          time.Duration
	PerBMC, MaxRequests int
	// BMCAfter, if set, times BMCTimeout instead of the real clock (tests).
	BMCAfter func(time.Duration) <-chan time.Time
	// MaxConns caps the connections the HTTP server holds open; 0 means
	// httpserver.DefaultMaxConns.
	MaxConns int
	// Auth says how callers' tokens are checked, and the token sent to HSM
	// (zero: neither).
	Auth    auth.Config
	Service Config
	Log     *slog.Logger
}

// Daemon is a pcs with its database open and its port bound. Run it, or
// Close it if it will not be run.
type Daemon struct {
	store *Store
	svc   *Service
	bmc   *BMCClient
	srv   *httpserver.Server
}

// StartDaemon opens the database, loads the stored transitions and binds
// the port.
func StartDaemon(ctx context.Context, cfg DaemonConfig) (d *Daemon, err error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.HSMURL == "" {
		return nil, errors.New("pcs needs HSM: set -hsm-url")
	}
	var override StaticCredentials
	if cfg.CredentialsFile != "" {
		if override, err = LoadCredentials(cfg.CredentialsFile); err != nil {
			return nil, err
		}
	}
	if cfg.BMCTimeout <= 0 {
		cfg.BMCTimeout = 30 * time.Second
	}
	if cfg.PerBMC <= 0 {
		cfg.PerBMC = 4
	}
	if cfg.MaxRequests <= 0 {
		cfg.MaxRequests = 4000
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
	hc := client.New(cfg.HSMURL, cfg.Auth.Client(nil), "pcs")
	creds := cfg.Credentials
	if creds == nil {
		fetch := func(ctx context.Context) ([]hsm.BMCCredential, error) { return hc.BMCCredentials(ctx, nil) }
		creds = NewHSMCredentials(fetch, override, cfg.Service.Now, cfg.Log)
	}
	reg := httpserver.NewRegistry()
	bmc := NewBMCClient(creds, cfg.MaxRequests, cfg.PerBMC, cfg.BMCTimeout, reg)
	bmc.after = cfg.BMCAfter
	cfg.Service.Log, cfg.Service.Registerer = cfg.Log, reg
	svc, err := New(ctx, store, hc, bmc, cfg.Service)
	if err != nil {
		store.Close()
		return nil, err
	}
	api := NewAPI(svc, cfg.Log, store.Ping, hc.Ready)
	ad, err := cfg.Auth.NewDaemon(AuthTable(), cfg.Log, reg)
	if err != nil {
		store.Close()
		return nil, err
	}
	h := ad.Wrap(api.Handler())
	srv := httpserver.Serve(ln, httpserver.WithPrefixes(h, GatewayPrefixes()...), cfg.Log, reg)
	ad.Configure(srv)
	if cfg.MaxConns > 0 {
		srv.MaxConns = cfg.MaxConns
	}
	return &Daemon{store: store, svc: svc, bmc: bmc, srv: srv}, nil
}

// URL is the base URL the daemon serves on.
func (d *Daemon) URL() string { return d.srv.URL() }

// Service is the daemon's service (tests, the CAPMC front).
func (d *Daemon) Service() *Service { return d.svc }

// Run serves and carries transitions out until ctx is cancelled, then
// shuts down gracefully and closes the database. Unfinished transitions
// stay stored and resume on the next start.
func (d *Daemon) Run(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return d.srv.Run(gctx) })
	g.Go(func() error { return d.svc.Run(gctx) })
	err := g.Wait()
	d.bmc.Close()
	return errors.Join(err, d.store.Close())
}

// Close releases a daemon that was started but will not be run.
func (d *Daemon) Close() error { return errors.Join(d.srv.Close(), d.store.Close()) }

// GatewayPrefixes are the paths the CSM API gateway serves pcs under
// (/apis/power-control/v1) and CAPMC under (/apis/capmc/capmc/v1).
func GatewayPrefixes() []httpserver.Prefix {
	return []httpserver.Prefix{{Gateway: "/apis/power-control" + Base, Base: Base},
		{Gateway: "/apis/capmc/capmc/v1", Base: CAPMCBase}}
}
