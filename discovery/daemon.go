package discovery

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"

	"golang.org/x/sync/errgroup"

	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/sealed"
	slsclient "github.com/hmsuite/hms/layout/client"
	"github.com/hmsuite/hms/statemgr/client"
)

// DaemonConfig is what a whole reds needs: cmd/reds fills it from its
// flags, `hms up` from its own.
type DaemonConfig struct {
	// Listen is the address to bind (":0" picks a free port).
	Listen string
	// DB is the SQLite file or a postgres:// URL (sqldb.Open); CredKeyFile
	// the key sealing BMC passwords in it (created if absent, mode 0600).
	DB, CredKeyFile string
	// SLSURL and HSMURL are the base URLs of SLS and HSM.
	SLSURL, HSMURL string
	// Bus, if set, carries the DHCP lease events (topic hms-dhcp-leases).
	Bus bus.Consumer
	// TokenFile holds the discovery token of the node-side routes (empty: off).
	TokenFile string
	// SNMPSecretsFile maps the SNMP password references SLS holds to the
	// passwords (JSON object; empty: SLS values are used as they are).
	SNMPSecretsFile string
	// BMCCABundle, if set, is the PEM file BMC certificates are checked against.
	BMCCABundle string
	BMC         BMCConfig
	SNMP        SNMPConfig
	// MaxConns caps the connections the HTTP server holds open; 0 means
	// httpserver.DefaultMaxConns.
	MaxConns int
	// Auth says how callers' tokens are checked, and the token sent to HSM
	// and SLS (zero: neither).
	Auth auth.Config
	// Service holds the roles, intervals and switch settings; its HSM, SLS,
	// Store, BMCs, Walker, Bus, Registerer and Log are set here.
	Service Config
	Log     *slog.Logger
}

// Daemon is a reds with its database open and its port bound. Run it, or
// Close it if it will not be run.
type Daemon struct {
	store *Store
	svc   *Service
	srv   *httpserver.Server
}

// StartDaemon reads the key and token files, opens the database and binds
// the port.
func StartDaemon(ctx context.Context, cfg DaemonConfig) (d *Daemon, err error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	sc := cfg.Service
	if err := readFiles(&cfg, &sc); err != nil {
		return nil, err
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
	store, err := OpenStore(ctx, cfg.DB, box, sc.Now)
	if err != nil {
		return nil, err
	}
	reg := httpserver.NewRegistry()
	peers := cfg.Auth.Client(nil)
	sc.HSM = client.New(cfg.HSMURL, peers, "reds")
	sc.SLS = slsclient.New(cfg.SLSURL, peers)
	sc.Store, sc.BMCs, sc.Walker = store, NewBMCs(cfg.BMC), NewSNMPWalker(cfg.SNMP)
	sc.Bus, sc.Registerer, sc.Log = cfg.Bus, reg, cfg.Log
	svc := New(sc)
	if err := svc.loadLeases(ctx); err != nil {
		store.Close()
		return nil, err
	}
	token, err := readToken(cfg.TokenFile)
	if err != nil {
		store.Close()
		return nil, err
	}
	api := NewAPI(svc, store, cfg.Log, token)
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
	return &Daemon{store: store, svc: svc, srv: srv}, nil
}

// readFiles reads the SNMP secrets and the BMC CA bundle the config names.
func readFiles(cfg *DaemonConfig, sc *Config) error {
	if cfg.SNMPSecretsFile != "" {
		b, err := os.ReadFile(cfg.SNMPSecretsFile)
		if err != nil {
			return fmt.Errorf("snmp secrets: %w", err)
		}
		if err := json.Unmarshal(b, &sc.Switch.Secrets); err != nil {
			// The file's content is secret: say where, not what.
			return fmt.Errorf("snmp secrets file %s: not a JSON object of strings", cfg.SNMPSecretsFile)
		}
	}
	if cfg.BMCCABundle != "" {
		pem, err := os.ReadFile(cfg.BMCCABundle)
		if err != nil {
			return fmt.Errorf("bmc ca bundle: %w", err)
		}
		cfg.BMC.RootCAs = x509.NewCertPool()
		if !cfg.BMC.RootCAs.AppendCertsFromPEM(pem) {
			return fmt.Errorf("bmc ca bundle %s: no PEM certificate found", cfg.BMCCABundle)
		}
	}
	return nil
}

// readToken reads the discovery token (surrounding space trimmed; none
// without a file).
func readToken(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	return cli.ReadToken("discovery token", path, MinDiscoveryToken)
}

// MinDiscoveryToken is the shortest discovery token accepted.
const MinDiscoveryToken = 16

// URL is the base URL the daemon serves on.
func (d *Daemon) URL() string { return d.srv.URL() }

// Service is the daemon's discovery service (tests, benchmarks).
func (d *Daemon) Service() *Service { return d.svc }

// Run discovers and serves until ctx is cancelled, then shuts down
// gracefully and closes the database.
func (d *Daemon) Run(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return d.srv.Run(gctx) })
	g.Go(func() error { return d.svc.Run(gctx) })
	err := g.Wait()
	return errors.Join(err, d.store.Close())
}

// Close releases a daemon that was started but will not be run.
func (d *Daemon) Close() error { return errors.Join(d.srv.Close(), d.store.Close()) }

// GatewayPrefixes are the paths the CSM API gateway serves this daemon
// under (/apis/reds/v1); the daemon answers them too.
func GatewayPrefixes() []httpserver.Prefix {
	return []httpserver.Prefix{{Gateway: "/apis/reds" + Base, Base: Base}}
}
