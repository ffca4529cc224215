package heartbeat

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/hmsuite/hms/heartbeat/agent"
	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/sqldb"
	"github.com/hmsuite/hms/statemgr/client"
)

// Daemon is an hbtd with its database open, its node states restored and
// its port bound. Run it, or Close it if it will not be run.
type Daemon struct {
	svc *Service
	srv *httpserver.Server
	// hsm and scnURL are hbtd's SCN subscription: who, and where to;
	// restored counts its re-subscriptions.
	hsm      SCNSource
	scnURL   string
	restored prometheus.Counter
}

// StartDaemon binds listen (":0" picks a free port), then opens and restores
// the Service o describes; o.Port is taken from the bound address and
// o.Registerer is the daemon's own.
func StartDaemon(ctx context.Context, listen string, o Options) (*Daemon, error) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", listen, err)
	}
	_, o.Port, _ = net.SplitHostPort(ln.Addr().String())
	reg := httpserver.NewRegistry()
	o.Registerer = reg
	o = o.withDefaults()
	// Restoring a large tracker takes a while; say so, and how long it took.
	o.Log.Info("database_loading", "path", sqldb.Display(o.DBPath))
	t0 := time.Now()
	svc, err := New(ctx, o)
	if err != nil {
		ln.Close()
		return nil, err
	}
	o.Log.Info("database_loaded", "path", sqldb.Display(o.DBPath), "took", time.Since(t0).Round(time.Millisecond))
	ad, err := o.Auth.NewDaemon(AuthTable(), o.Log, reg)
	if err != nil {
		ln.Close()
		svc.Close()
		return nil, err
	}
	h := ad.Wrap(NewAPI(svc, o.Log).Handler())
	srv := httpserver.Serve(ln, httpserver.WithPrefixes(h, GatewayPrefixes()...), o.Log, reg)
	ad.Configure(srv)
	if o.MaxConns > 0 {
		srv.MaxConns = o.MaxConns
	}
	scnURL := o.SCNInURL
	if scnURL == "" {
		scnURL = httpserver.CallbackURL(o.Auth.TLS.Scheme(), o.HSMURL, ln.Addr(), SCNPath)
	}
	hc := client.New(strings.TrimSuffix(strings.TrimRight(o.HSMURL, "/"), "/hsm/v2"), o.Auth.Client(o.HTTPClient), "hbtd")
	return &Daemon{svc: svc, srv: srv, hsm: hc, scnURL: scnURL, restored: client.NewRestoredCounter("hbtd", reg)}, nil
}

// URL is the base URL the daemon serves on.
func (d *Daemon) URL() string { return d.srv.URL() }

// Run tracks heartbeats, serves and subscribes to HSM's SCNs of nodes
// whose power changed (see Service.SCN) until ctx is cancelled, then
// delivers what it can, shuts down gracefully and closes the database.
func (d *Daemon) Run(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return d.svc.Run(gctx) })
	g.Go(func() error { return d.srv.Run(gctx) })
	g.Go(func() error { d.svc.Subscribe(gctx, d.hsm, d.scnURL, d.restored); return nil })
	err := g.Wait()
	return errors.Join(err, d.svc.Close())
}

// Close releases a daemon that was started but will not be run.
func (d *Daemon) Close() error { return errors.Join(d.srv.Close(), d.svc.Close()) }

// GatewayPrefixes are the paths the CSM API gateway serves this daemon
// under (/apis/hbtd/hmi/v1); the daemon answers them too, so CSM clients can
// be pointed straight at it.
func GatewayPrefixes() []httpserver.Prefix {
	return []httpserver.Prefix{{Gateway: "/apis/hbtd" + agent.BasePath, Base: agent.BasePath}}
}
