package auth

import (
	"crypto/tls"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Daemon is the auth of one daemon, made once at its start: the guard of
// its routes and the guard of its /metrics, which share one Verifier (one
// JWKS cache, one decisions counter), and the TLS its server serves with.
type Daemon struct {
	cfg       Config
	table     Table
	v         *Verifier // nil: tokens are not checked
	log       *slog.Logger
	decisions *prometheus.CounterVec
	tls       *tls.Config // nil: plain HTTP
}

// NewDaemon reads what c names (a key file, the TLS files) and returns the
// auth of the daemon whose route table is t. reg (may be nil) gets
// hms_auth_decisions_total and the token cache's hms_auth_token_cache_*.
func (c Config) NewDaemon(t Table, log *slog.Logger, reg prometheus.Registerer) (*Daemon, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	d := &Daemon{cfg: c, table: t, log: log}
	var err error
	// The JWKS (and bss's node-jwks) may be served over mTLS too; the
	// daemon's token is not sent there.
	if d.v, err = NewVerifier(c, c.TLS.Client(&http.Client{Timeout: 10 * time.Second}), nil); err != nil {
		return nil, err
	}
	if d.tls, err = c.TLS.Server(); err != nil {
		return nil, err
	}
	if d.v != nil {
		d.decisions = newDecisions(reg)
		d.v.cache.register(reg)
	}
	return d, nil
}

// Wrap returns next guarded by the daemon's table, or next itself when
// tokens are not checked. Wrap it inside the gateway prefixes
// (httpserver.WithPrefixes), so the guard sees the daemon's own paths.
func (d *Daemon) Wrap(next http.Handler) http.Handler {
	if d.v == nil {
		return next
	}
	mode := "enforce"
	if d.cfg.Shadow {
		mode = "shadow"
	}
	d.log.Info("auth_on", "mode", mode, "routes", len(d.table.Routes))
	return guardFor(d.v, d.cfg.Shadow, d.table, next, d.log, d.decisions)
}

// Server is what Configure sets on a daemon's server
// (httpserver.Server).
type Server interface {
	WrapMetrics(wrap func(http.Handler) http.Handler)
	UseTLS(c *tls.Config)
}

// Configure has srv serve HTTPS when the daemon has a certificate, and,
// with -metrics-auth, take a viewer, operator or admin token on /metrics
// (else /metrics stays open: Prometheus scrapers often carry no token).
// Call it before srv runs.
func (d *Daemon) Configure(srv Server) {
	srv.UseTLS(d.tls)
	if !d.cfg.MetricsAuth || d.v == nil {
		return
	}
	t := Table{Daemon: d.table.Daemon, Routes: []Route{{Pattern: "/metrics", Access: Read()}}}
	srv.WrapMetrics(func(h http.Handler) http.Handler { return guardFor(d.v, d.cfg.Shadow, t, h, d.log, d.decisions) })
}
