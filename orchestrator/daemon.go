package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/httpserver"
	bssclient "github.com/hmsuite/hms/ipxe/client"
	pcsclient "github.com/hmsuite/hms/power/client"
	"github.com/hmsuite/hms/statemgr/client"
)

// DaemonConfig is what a whole bos needs: cmd/bos fills it from its flags,
// `hms up` from its own.
type DaemonConfig struct {
	// Listen is the address to bind (":0" picks a free port).
	Listen string
	// DB is the SQLite file, or a postgres:// URL (sqldb.Open).
	DB string
	// HSMURL, BSSURL and PCSURL are the peers' base URLs (required).
	HSMURL, BSSURL, PCSURL string
	// S3 serves s3:// manifest paths (see Config.S3).
	S3 S3
	// CFSURL is a CFS v3 service that configures nodes; empty: no
	// configuration step (see Config.CFS).
	CFSURL string
	// Command configures nodes with a site command instead (see
	// CommandConfig); nil: none. Not with CFSURL.
	Command *CommandConfig
	// SCNInURL is where HSM posts SCNs to bos (SCNPath); empty: this
	// daemon's URL as HSM reaches it (loopback when HSM is on loopback).
	SCNInURL string
	// FallbackPoll: see Config.FallbackPoll.
	FallbackPoll time.Duration
	// TransitionGiveUp and TransitionGiveUpChecks: see Config's.
	TransitionGiveUp       time.Duration
	TransitionGiveUpChecks int
	// PeerTimeout bounds one request to a peer [20 s, BOS's *_read_timeout].
	PeerTimeout time.Duration
	// MaxConns caps the connections the HTTP server holds open; 0 means
	// httpserver.DefaultMaxConns.
	MaxConns int
	// Now is the operators' clock [time.Now].
	Now func() time.Time
	// After times bos's checks of the PCS transitions it started
	// [time.After] (see Config.After); SubscriptionAfter those of its HSM
	// subscription [time.After].
	After, SubscriptionAfter func(time.Duration) <-chan time.Time
	// Auth says how callers' tokens are checked, and the token sent to
	// HSM, BSS and PCS (never to a manifest's host).
	Auth auth.Config
	Log  *slog.Logger
}

// Daemon is a bos with its database open and its port bound. Run it, or
// Close it if it will not be run.
type Daemon struct {
	store *Store
	svc   *Service
	srv   *httpserver.Server
	// hsm and scnURL are bos's SCN subscription: who, and where to;
	// restored counts its re-subscriptions.
	hsm      *client.Client
	scnURL   string
	restored prometheus.Counter
}

// StartDaemon opens the database, loads the components and binds the port.
func StartDaemon(ctx context.Context, cfg DaemonConfig) (d *Daemon, err error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.HSMURL == "" || cfg.BSSURL == "" || cfg.PCSURL == "" {
		return nil, errors.New("bos needs HSM, BSS and PCS: set -hsm-url, -bss-url and -pcs-url")
	}
	if cfg.CFSURL != "" && cfg.Command != nil {
		return nil, errors.New("bos configures nodes through CFS or a command, not both: set -cfs-url or -config-command")
	}
	if cfg.PeerTimeout <= 0 {
		cfg.PeerTimeout = 20 * time.Second
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
	hc := cfg.Auth.Client(&http.Client{Timeout: cfg.PeerTimeout})
	h := client.New(cfg.HSMURL, hc, "bos")
	sc := Config{Now: cfg.Now, Manifests: &http.Client{Timeout: cfg.PeerTimeout}, S3: cfg.S3,
		FallbackPoll: cfg.FallbackPoll, After: cfg.After, SubscriptionAfter: cfg.SubscriptionAfter, Command: cfg.Command, Log: cfg.Log,
		TransitionGiveUp: cfg.TransitionGiveUp, TransitionGiveUpChecks: cfg.TransitionGiveUpChecks}
	if cfg.CFSURL != "" {
		sc.CFS = NewCFSClient(cfg.CFSURL, hc)
	}
	svc, err := New(ctx, store, h, bssclient.New(cfg.BSSURL, hc), pcsclient.New(cfg.PCSURL, hc, "bos"), sc)
	if err != nil {
		store.Close()
		return nil, err
	}
	reg := httpserver.NewRegistry()
	ad, err := cfg.Auth.NewDaemon(AuthTable(), cfg.Log, reg)
	if err != nil {
		store.Close()
		return nil, err
	}
	api := ad.Wrap(NewAPI(svc, cfg.Log).Handler())
	srv := httpserver.Serve(ln, httpserver.WithPrefixes(api, GatewayPrefixes()...), cfg.Log, reg)
	ad.Configure(srv)
	if cfg.MaxConns > 0 {
		srv.MaxConns = cfg.MaxConns
	}
	scnURL := cfg.SCNInURL
	if scnURL == "" {
		scnURL = httpserver.CallbackURL(cfg.Auth.TLS.Scheme(), cfg.HSMURL, ln.Addr(), SCNPath)
	}
	return &Daemon{store: store, svc: svc, srv: srv, hsm: h, scnURL: scnURL, restored: client.NewRestoredCounter("bos", reg)}, nil
}

// URL is the base URL the daemon serves on.
func (d *Daemon) URL() string { return d.srv.URL() }

// Service is the daemon's service (tests).
func (d *Daemon) Service() *Service { return d.svc }

// Run serves and runs the operators until ctx is cancelled, then shuts
// down gracefully and closes the database. Sessions stay stored and resume
// on the next start.
func (d *Daemon) Run(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return d.srv.Run(gctx) })
	g.Go(func() error { return d.svc.Run(gctx) })
	g.Go(func() error { d.svc.Subscribe(gctx, d.hsm, d.scnURL, d.restored); return nil })
	err := g.Wait()
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		err = nil
	}
	return errors.Join(err, d.store.Close())
}

// Close releases a daemon that was started but will not be run.
func (d *Daemon) Close() error { return errors.Join(d.srv.Close(), d.store.Close()) }
