package statemgr

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/hmsuite/hms/heartbeat/agent"
	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/auth/token"
	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/sqldb"
	"github.com/hmsuite/hms/statemgr/component"
	"github.com/hmsuite/hms/statemgr/internal/core"
	"github.com/hmsuite/hms/statemgr/inventory"
	"github.com/hmsuite/hms/statemgr/lock"
	"github.com/hmsuite/hms/statemgr/scn"
)

// DaemonConfig is what a whole hsm needs: cmd/hsm fills it from its flags,
// `hms up` from its own. Zero durations take the hsm defaults.
type DaemonConfig struct {
	// Listen is the address to bind (":0" picks a free port).
	Listen string
	// DB is the SQLite file, or a postgres:// URL (sqldb.Open).
	DB string
	// SLSURL, if set, is where new nodes' default NID, Role and SubRole come from.
	SLSURL string
	// HBTDURL, if set, is the hbtd asked whether nodes that turn On
	// heartbeat (inventory.HeartbeatCheck); HBTD, if set, is asked instead
	// (hms up's hbtd, whose URL is known only once it has started).
	HBTDURL string
	HBTD    inventory.Heartbeats
	// Publisher receives the SCNs on Topic; the caller owns it.
	Publisher bus.Publisher
	Topic     string
	// Retention bounds how long an SCN a consumer has not taken is kept (24 h).
	Retention time.Duration
	// SCNDeadAfter deletes a subscription whose callback has failed every
	// post for this long (0: never; the flag's default is 24 h).
	SCNDeadAfter time.Duration
	// Reap is how often expired reservations are removed (30 s).
	Reap time.Duration
	// StateHistory is how many component State and Flag changes are kept
	// (GET /State/Components/History): 0 means DefaultStateHistory, a
	// negative value none (changes are not recorded).
	StateHistory int
	// StateHistoryAge also drops the changes older than this: 0 means
	// DefaultStateHistoryAge, a negative value no age bound.
	StateHistoryAge time.Duration
	// CredKeyFile holds the key that seals BMC credentials (created if absent).
	CredKeyFile string
	// Discovery configures the Redfish walks (its Registerer and Log are set here).
	Discovery inventory.DiscoveryConfig
	// CABundle, if set, is the PEM file BMC certificates are checked against.
	CABundle string
	// HMSConfig, if set, is the site hms_config.json (Roles, SubRoles), re-read on change.
	HMSConfig string
	// MaxConns caps the connections the HTTP server holds open; 0 means
	// httpserver.DefaultMaxConns.
	MaxConns int
	// Auth says how callers' tokens are checked, and the token sent to SLS
	// and to SCN subscribers on this host (zero: neither).
	Auth auth.Config
	// SCNToken, when set, goes with the SCN callbacks to subscribers on
	// this host and on SCNTokenHosts instead (a token with the scn role
	// only).
	SCNToken token.Config
	// SCNTokenHosts are the hosts besides this one SCNToken goes to.
	SCNTokenHosts []string
	Log           *slog.Logger
}

// Daemon is an hsm with its database open and its port bound. Run it, or
// Close it if it will not be run.
type Daemon struct {
	cfg   DaemonConfig
	store *Store
	disc  *inventory.Discovery
	relay *scn.Relay
	srv   *httpserver.Server
}

// StartDaemon opens the database, loads the site values and the discovery
// key, and binds the port.
func StartDaemon(ctx context.Context, cfg DaemonConfig) (d *Daemon, err error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Reap <= 0 {
		cfg.Reap = 30 * time.Second
	}
	if cfg.StateHistory == 0 {
		cfg.StateHistory = DefaultStateHistory
	}
	if cfg.StateHistoryAge == 0 {
		cfg.StateHistoryAge = DefaultStateHistoryAge
	}
	sc := StoreConfig{NoHistory: cfg.StateHistory < 0}
	if cfg.SLSURL != "" {
		sc.Layout = component.NewSLS(cfg.SLSURL, cfg.Auth.Client(nil))
	}
	// Loading a large database takes a while; say so, and how long it took.
	cfg.Log.Info("database_loading", "path", sqldb.Display(cfg.DB))
	t0 := time.Now()
	store, err := OpenStore(ctx, cfg.DB, sc)
	if err != nil {
		return nil, err
	}
	cfg.Log.Info("database_loaded", "path", sqldb.Display(cfg.DB), "took", time.Since(t0).Round(time.Millisecond))
	defer func() {
		if err != nil {
			store.Close()
		}
	}()
	if cfg.HMSConfig != "" {
		if err := core.LoadHMSConfig(cfg.HMSConfig, store.Vocab()); err != nil {
			return nil, err
		}
	}
	reg := httpserver.NewRegistry()
	dc := cfg.Discovery
	dc.Registerer, dc.Log = reg, cfg.Log
	disc, err := inventory.LoadDiscovery(inventory.NewStore(store.Store), cfg.CredKeyFile, cfg.CABundle, dc)
	if err != nil {
		return nil, err
	}
	// A subscriber chooses its callback URL, and a token sent there is the
	// subscriber's to use: SCN callbacks carry the scn-role token only to
	// subscribers on this host and on SCNTokenHosts (a node subscribing
	// with its own URL must not collect a token that posts SCNs to bss or
	// hmnfd), or else hsm's own token only to subscribers on this host
	// (hms up's hmnfd and bss).
	hosts := token.Hosts(cfg.SCNTokenHosts)
	// Subscribers served over TLS (hmnfd, bss, bos with -tls-cert) get
	// hsm's certificate as client certificate.
	callbacks := cfg.SCNToken.ClientIf(cfg.Auth.TLS.Client(&http.Client{Timeout: 10 * time.Second}),
		func(r *http.Request) bool { return hosts.Allows(r.URL.Hostname()) })
	if !cfg.SCNToken.Set() {
		callbacks = cfg.Auth.Token.ClientIf(callbacks,
			func(r *http.Request) bool { return httpserver.IsLoopbackURL(r.URL.String()) })
	}
	relay := scn.NewRelay(scn.NewStore(store.Store), scn.RelayConfig{Publisher: cfg.Publisher, Topic: cfg.Topic, Retention: cfg.Retention,
		DeadAfter: cfg.SCNDeadAfter, Client: callbacks, Registerer: reg, Log: cfg.Log})
	api := NewAPI(store, cfg.Log, disc)
	ad, err := cfg.Auth.NewDaemon(AuthTable(), cfg.Log, reg)
	if err != nil {
		return nil, err
	}
	h := ad.Wrap(api.Handler())
	srv, err := httpserver.Listen(cfg.Listen, httpserver.WithPrefixes(h, GatewayPrefixes()...), cfg.Log, reg)
	if err != nil {
		return nil, err
	}
	ad.Configure(srv)
	if cfg.MaxConns > 0 {
		srv.MaxConns = cfg.MaxConns
	}
	if cfg.HBTD == nil && cfg.HBTDURL != "" {
		cfg.HBTD = agent.NewClient(cfg.HBTDURL, cfg.Auth.Client(&http.Client{Timeout: 10 * time.Second}))
	}
	return &Daemon{cfg: cfg, store: store, disc: disc, relay: relay, srv: srv}, nil
}

// URL is the base URL the daemon serves on (without /hsm/v2).
func (d *Daemon) URL() string { return d.srv.URL() }

// Run serves, relays SCNs, walks BMCs, watches Standby nodes and reaps
// reservations until ctx is cancelled, then shuts down gracefully and
// closes the database.
func (d *Daemon) Run(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return d.srv.Run(gctx) })
	g.Go(func() error { return d.relay.Run(gctx) })
	g.Go(func() error { return d.disc.Run(gctx) })
	g.Go(func() error { return inventory.NewWatchdog(d.disc, inventory.WatchdogConfig{Log: d.cfg.Log}).Run(gctx) })
	if d.cfg.HBTD != nil {
		g.Go(func() error {
			return inventory.NewHeartbeatCheck(d.disc, inventory.HeartbeatCheckConfig{HBTD: d.cfg.HBTD, Log: d.cfg.Log}).Run(gctx)
		})
	}
	g.Go(func() error {
		return lock.RunReservationReaper(gctx, lock.NewStore(d.store.Store), d.cfg.Reap, d.cfg.Log)
	})
	g.Go(func() error {
		return component.RunHistoryPruner(gctx, component.NewStore(d.store.Store), d.historyRetention(), d.cfg.Log)
	})
	if d.cfg.HMSConfig != "" {
		g.Go(func() error {
			return core.WatchHMSConfig(gctx, d.cfg.HMSConfig, 10*time.Second, d.store.Vocab(), d.cfg.Log)
		})
	}
	err := g.Wait()
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		// Stopped by the caller, maybe before every loop had started (the
		// discovery backlog read, the watchdog cursor): not a failure.
		err = nil
	}
	return errors.Join(err, d.store.Close())
}

// Defaults of DaemonConfig.StateHistory and StateHistoryAge: at a few
// changes per node and boot, a few boots of 10,000 nodes, a week at most.
const (
	DefaultStateHistory    = 200_000
	DefaultStateHistoryAge = 7 * 24 * time.Hour
)

// historyRetention is the component history bound of d's configuration,
// checked every minute (and so exceeded by at most a minute's changes).
func (d *Daemon) historyRetention() component.HistoryRetention {
	return component.HistoryRetention{Rows: max(d.cfg.StateHistory, 0), Age: max(d.cfg.StateHistoryAge, 0), Every: time.Minute}
}

// Close releases a daemon that was started but will not be run.
func (d *Daemon) Close() error { return errors.Join(d.srv.Close(), d.store.Close()) }

// GatewayPrefixes are the paths the CSM API gateway serves this daemon
// under (/apis/smd/hsm/v2); the daemon answers them too, so CSM clients can
// be pointed straight at it.
func GatewayPrefixes() []httpserver.Prefix {
	return []httpserver.Prefix{{Gateway: "/apis/smd" + Base, Base: Base}}
}
