package fanout

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/sqldb"
	"github.com/hmsuite/hms/statemgr/client"
)

// DaemonConfig is what a whole hmnfd needs: cmd/hmnfd fills it from its
// flags, `hms up` from its own.
type DaemonConfig struct {
	// Listen is the address to bind (":0" picks a free port).
	Listen string
	// DB is the SQLite file, or a postgres:// URL (sqldb.Open).
	DB string
	// Delivery configures matching and delivery (zero fields take the
	// DefaultConfig values).
	Delivery Config
	// SCNs come from Bus (topic Topic, consumer group Group) when it is set;
	// otherwise, if HSMURL is set, from HSM's callbacks to ScnInURL (empty:
	// this daemon's loopback URL when HSMURL is on loopback, else
	// http://<hostname>:<port>); otherwise only over POST /hmi/v1/scn.
	Bus          bus.Consumer
	Topic, Group string
	// Brokers are reported by /params (Telemetry_host) when Kafka is used.
	Brokers          []string
	HSMURL, ScnInURL string
	Log              *slog.Logger
	// LogLevel, if set, follows the Debug parameter.
	LogLevel *slog.LevelVar
	// MaxConns caps open connections; 0 means httpserver.DefaultMaxConns.
	MaxConns int
	// Auth says how callers' tokens are checked, and the token sent to HSM
	// (zero: neither).
	Auth auth.Config
}

// Daemon is an hmnfd with its database open and its port bound. Run it, or
// Close it if it will not be run.
type Daemon struct {
	cfg   DaemonConfig
	store *Store
	svc   *Service
	srv   *httpserver.Server
	inURL string
}

// StartDaemon opens the database, loads the subscriptions and binds the port.
func StartDaemon(ctx context.Context, cfg DaemonConfig) (d *Daemon, err error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.LogLevel == nil {
		cfg.LogLevel = new(slog.LevelVar)
	}
	if cfg.Topic == "" {
		cfg.Topic = bus.TopicSCN
	}
	if cfg.Group == "" {
		cfg.Group = "hmnfd"
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
	// Loading a large database takes a while; say so, and how long it took.
	cfg.Log.Info("database_loading", "path", sqldb.Display(cfg.DB))
	t0 := time.Now()
	store, err := OpenStore(ctx, cfg.DB)
	if err != nil {
		return nil, err
	}
	cfg.Log.Info("database_loaded", "path", sqldb.Display(cfg.DB), "took", time.Since(t0).Round(time.Millisecond))
	reg := httpserver.NewRegistry()
	if cfg.Delivery.TLS == nil && cfg.Auth.TLS.ClientTLS() != nil {
		cfg.Delivery.TLS = cfg.Auth.TLS.ConfigureTransport
	}
	svc, err := New(ctx, store, cfg.Delivery, cfg.Log, reg)
	if err != nil {
		store.Close()
		return nil, err
	}
	var brokers []string
	if cfg.Bus != nil {
		brokers = cfg.Brokers
	}
	if cfg.ScnInURL == "" && cfg.Bus == nil {
		// The callback HSM is told: this listener's address for a loopback
		// HSM, else the host's name; https when the daemon serves TLS.
		cfg.ScnInURL = httpserver.CallbackURL(cfg.Auth.TLS.Scheme(), cfg.HSMURL, ln.Addr(), "/hmi/v1/scn")
	}
	params := StartParams(ln.Addr().String(), cfg.DB, cfg.HSMURL, cfg.ScnInURL, brokers, cfg.Topic)
	api := NewAPI(svc, cfg.Log, params, cfg.LogLevel)
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
	return &Daemon{cfg: cfg, store: store, svc: svc, inURL: params.ScnInURL, srv: srv}, nil
}

// URL is the base URL the daemon serves on.
func (d *Daemon) URL() string { return d.srv.URL() }

// Intake is closed once SCNs can flow in: at once with a bus or without
// HSM, and in HSM-callback mode when HSM has hmnfd's subscription (SCNs HSM
// commits before that are not for hmnfd; after a restart the subscription
// is HSM's already).
func (d *Daemon) Intake() <-chan struct{} {
	if d.cfg.Bus == nil && d.cfg.HSMURL != "" {
		return d.svc.hsmSubscribed
	}
	ch := make(chan struct{})
	close(ch)
	return ch
}

// Run takes SCNs in, delivers them and serves until ctx is cancelled, then
// shuts down gracefully and closes the database.
func (d *Daemon) Run(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return d.srv.Run(gctx) })
	g.Go(func() error { return d.svc.Run(gctx) })
	switch {
	case d.cfg.Bus != nil:
		g.Go(func() error { return d.svc.Consume(gctx, d.cfg.Bus, d.cfg.Topic, d.cfg.Group) })
	case d.cfg.HSMURL != "":
		hc := d.cfg.Auth.Client(&http.Client{Timeout: 15 * time.Second})
		// One name per callback (client.SubscriberName): two hmnfd on one
		// host do not take one subscription from each other.
		name := client.SubscriberName("hmnfd", d.inURL)
		g.Go(func() error { return d.svc.SubscribeHSM(gctx, hc, d.cfg.HSMURL, d.inURL, name) })
	}
	err := g.Wait()
	return errors.Join(err, d.store.Close())
}

// Close releases a daemon that was started but will not be run.
func (d *Daemon) Close() error { return errors.Join(d.srv.Close(), d.store.Close()) }

// GatewayPrefixes are the paths the CSM API gateway serves this daemon
// under (/apis/hmnfd/hmi/v1 and v2); the daemon answers them too, so CSM clients can
// be pointed straight at it.
func GatewayPrefixes() []httpserver.Prefix {
	return []httpserver.Prefix{{Gateway: "/apis/hmnfd/hmi/v1", Base: "/hmi/v1"}, {Gateway: "/apis/hmnfd/hmi/v2", Base: "/hmi/v2"}}
}
