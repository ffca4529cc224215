package ipxe

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/ipxe/dhcp"
	"github.com/hmsuite/hms/ipxe/tftp"
)

// DaemonConfig is what a whole bss needs: cmd/bss fills it from its flags,
// `hms up` from its own.
type DaemonConfig struct {
	// Listen is the address to bind (":0" picks a free port).
	Listen string
	// DB is the SQLite file, or a postgres:// URL (sqldb.Open).
	DB string
	// HSMURL is HSM's base URL (empty: no HSM, every node is unknown).
	HSMURL string
	// AdvertiseURL is the base URL nodes reach BSS on; empty: this
	// daemon's own URL (loopback for a wildcard listen: set it in production).
	AdvertiseURL string
	// ScnInURL is where HSM posts SCNs; empty: this daemon's loopback URL
	// when HSM is on loopback, else http://<hostname>:<port>/boot/v1/scn.
	ScnInURL string
	// Resync is how often the whole HSM cache is re-read (5 min).
	Resync time.Duration
	// RetryDelay and RetrievalDelay are the script sleeps (30 s, 10 s).
	RetryDelay, RetrievalDelay time.Duration
	// Version is what /boot/v1/service/version reports.
	Version string
	// DHCP and TFTP, when set, run the boot chain's DHCP and TFTP servers
	// beside the API (ipxe/dhcp, ipxe/tftp); nil: off. StartDaemon fills in
	// what the daemon knows (the boot URL, the HSM lookup, the publisher).
	DHCP *dhcp.ServerConfig
	// TFTP's root is also served over HTTP under /ipxe/ (UEFI HTTP boot).
	TFTP *tftp.Config
	// Publisher receives the DHCP server's lease events (lease.Topic); nil:
	// they are not published.
	Publisher bus.Publisher
	// MaxConns caps open connections; 0 means httpserver.DefaultMaxConns.
	MaxConns int
	// Auth says how callers' tokens are checked, and the token sent to HSM
	// (zero: neither).
	Auth auth.Config
	// TrustedProxies are the peers whose X-Forwarded-For names a
	// cloud-init caller (Config.TrustedProxies); nil: none.
	TrustedProxies []netip.Prefix
	// NodeTokenKey is the PEM private key node tokens are signed with
	// (empty: no node tokens); NodeTokenTTL how long they are valid.
	NodeTokenKey string
	NodeTokenTTL time.Duration
	// DiscoveryTokenFile holds the token put on the discovery image's
	// kernel command line (ScriptConfig.DiscoveryToken; empty: none).
	DiscoveryTokenFile string
	Log                *slog.Logger
}

// Version is the default /service/version answer: the hms-bss release whose
// wire format this package speaks.
const Version = "1.37.0"

// Daemon is a bss with its database open and its port bound. Run it, or
// Close it if it will not be run.
type Daemon struct {
	store *Store
	svc   *Service
	srv   *httpserver.Server
	bc    *bootChain
}

// StartDaemon opens the database and binds the port.
func StartDaemon(ctx context.Context, cfg DaemonConfig) (d *Daemon, err error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Version == "" {
		cfg.Version = Version
	}
	if cfg.DHCP != nil {
		if err := serverID(cfg.DHCP); err != nil {
			return nil, err
		}
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
	reg := httpserver.NewRegistry()
	sc := Config{Script: ScriptConfig{AdvertiseURL: cfg.AdvertiseURL, RetryDelay: cfg.RetryDelay,
		RetrievalDelay: cfg.RetrievalDelay}, Log: cfg.Log, Registerer: reg, TrustedProxies: cfg.TrustedProxies}
	if cfg.NodeTokenKey != "" {
		signer, err := auth.LoadSigner(cfg.NodeTokenKey, nil)
		if err != nil {
			store.Close()
			return nil, err
		}
		sc.NodeTokens = &NodeTokens{Signer: signer, TTL: cfg.NodeTokenTTL}
	}
	if sc.Script.AdvertiseURL == "" {
		sc.Script.AdvertiseURL = defaultAdvertise(cfg.DHCP, ln.Addr(), cfg.Auth.TLS.Scheme())
	}
	if cfg.DiscoveryTokenFile != "" {
		if sc.Script.DiscoveryToken, err = cli.ReadToken("discovery token", cfg.DiscoveryTokenFile, minDiscoveryToken); err != nil {
			store.Close()
			return nil, err
		}
	}
	if cfg.HSMURL != "" {
		sc.HSM = NewHSMClient(cfg.HSMURL, cfg.Auth.Client(nil))
		sc.Sync = SyncConfig{CallbackURL: cfg.ScnInURL, Resync: cfg.Resync}
		if sc.Sync.CallbackURL == "" {
			sc.Sync.CallbackURL = httpserver.CallbackURL(cfg.Auth.TLS.Scheme(), cfg.HSMURL, ln.Addr(), Base+"/scn")
		}
	}
	svc, err := New(ctx, store, sc)
	if err != nil {
		store.Close()
		return nil, err
	}
	bc, err := startBootChain(ctx, cfg, store.db, svc.Cache(), sc.Script.AdvertiseURL, reg)
	if err != nil {
		store.Close()
		return nil, err
	}
	api := NewAPI(svc, bc.leases(), cfg.Log, cfg.Version)
	ad, err := cfg.Auth.NewDaemon(AuthTable(), cfg.Log, reg)
	if err != nil {
		bc.Close()
		store.Close()
		return nil, err
	}
	guarded := ad.Wrap(api.Handler())
	// The boot chain's iPXE binaries (GET /ipxe/) stay open: firmware
	// fetches them before anything could give it a token.
	h := bc.handler(httpserver.WithPrefixes(guarded, GatewayPrefixes()...))
	srv := httpserver.Serve(ln, h, cfg.Log, reg)
	ad.Configure(srv)
	if cfg.MaxConns > 0 {
		srv.MaxConns = cfg.MaxConns
	}
	return &Daemon{store: store, svc: svc, bc: bc, srv: srv}, nil
}

// defaultAdvertise is the advertise URL when none is given: with a DHCP
// server, its own address (what nodes reach), else this daemon's URL;
// scheme is "https" when bss serves TLS.
func defaultAdvertise(dc *dhcp.ServerConfig, addr net.Addr, scheme string) string {
	if dc != nil && dc.Handler.ServerID.IsValid() {
		if ta, ok := addr.(*net.TCPAddr); ok {
			return scheme + "://" + net.JoinHostPort(dc.Handler.ServerID.String(), strconv.Itoa(ta.Port))
		}
	}
	return httpserver.SchemeURL(scheme, addr)
}

// URL is the base URL the daemon serves on.
func (d *Daemon) URL() string { return d.srv.URL() }

// Service is the daemon's service (its cache, for the DHCP server and tests).
func (d *Daemon) Service() *Service { return d.svc }

// Run serves and follows HSM until ctx is cancelled, then shuts down
// gracefully and closes the database.
func (d *Daemon) Run(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return d.srv.Run(gctx) })
	g.Go(func() error { return d.svc.Run(gctx) })
	for _, run := range d.bc.runners() {
		g.Go(func() error { return run(gctx) })
	}
	err := g.Wait()
	return errors.Join(err, d.store.Close())
}

// Close releases a daemon that was started but will not be run.
func (d *Daemon) Close() error { return errors.Join(d.srv.Close(), d.bc.Close(), d.store.Close()) }

// DHCP is the daemon's DHCP server (nil when off).
func (d *Daemon) DHCP() *dhcp.Server { return d.bc.dhcp }

// TFTP is the daemon's TFTP server (nil when off).
func (d *Daemon) TFTP() *tftp.Server { return d.bc.tftp }

// GatewayPrefixes are the paths the CSM API gateway serves this daemon
// under (/apis/bss/boot/v1); the daemon answers them too, so CSM clients
// can be pointed straight at it.
func GatewayPrefixes() []httpserver.Prefix {
	return []httpserver.Prefix{{Gateway: "/apis/bss" + Base, Base: Base}}
}
