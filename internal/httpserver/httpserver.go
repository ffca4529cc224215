// Package httpserver is the HTTP plumbing every daemon of the suite shares: a
// server that binds before Run and shuts down gracefully with a fresh bounded
// context, request logging with slog, Prometheus metrics on /metrics, a Mux
// that records its routes and answers unknown routes and methods with
// problem+json, the CSM gateway prefixes (WithPrefixes), and the JSON
// reading and writing helpers handlers use.
package httpserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/hmsuite/hms/internal/auth/token"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/version"
)

// DefaultShutdownTimeout bounds how long Run waits for in-flight requests after
// its context is cancelled.
const DefaultShutdownTimeout = 15 * time.Second

// Server is an HTTP server bound to a listener. Create it with Listen, then call Run.
type Server struct {
	ln              net.Listener
	srv             *http.Server
	log             *slog.Logger
	ShutdownTimeout time.Duration
	// BodyTimeout bounds reading a request body (from the end of its
	// header), BulkBodyTimeout the same on routes IsBulk reports; a body not
	// received in time reads as an error that ReadJSON answers with 408.
	// Zero disables the deadline. Set these before Run.
	BodyTimeout, BulkBodyTimeout time.Duration
	IsBulk                       func(*http.Request) bool
	// MaxConns caps the connections open at once; beyond it a connection
	// gets a bare 503 problem+json and is closed. Zero or less: no cap.
	MaxConns int
	// metrics answers GET /metrics (WrapMetrics guards it).
	metrics http.Handler
	// tls, when set, makes Run serve HTTPS (UseTLS).
	tls *tls.Config
}

// UseTLS makes the server serve HTTPS with c (mtls.Config.Server: with a
// client CA the handshake refuses callers without a certificate it
// signed); nil keeps plain HTTP. Call it before Run. Beyond MaxConns a TLS
// caller gets its connection closed (the bare 503 is plain text it cannot
// read).
func (s *Server) UseTLS(c *tls.Config) { s.tls = c }

// WrapMetrics puts wrap around the /metrics handler (a token check: auth's
// Daemon.Configure). Call it before Run.
func (s *Server) WrapMetrics(wrap func(http.Handler) http.Handler) { s.metrics = wrap(s.metrics) }

// NewRegistry returns a Prometheus registry with the Go runtime and process
// collectors registered, and hms_build_info (always 1, its version label the
// build this binary is: `hms status` reads it); each daemon owns one and
// passes it around.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	build := prometheus.NewGauge(prometheus.GaugeOpts{Name: "hms_build_info",
		Help:        "Always 1; the version label is the build of the suite this daemon runs.",
		ConstLabels: prometheus.Labels{"version": version.String()}})
	build.Set(1)
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), build)
	return reg
}

// Listen binds addr (":0" picks a free port) and returns a server that will serve
// h, wrapped with request logging and metrics, plus GET /metrics from reg.
func Listen(addr string, h http.Handler, log *slog.Logger, reg *prometheus.Registry) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return Serve(ln, h, log, reg), nil
}

// Serve is Listen for a listener the caller already bound.
func Serve(ln net.Listener, h http.Handler, log *slog.Logger, reg *prometheus.Registry) *Server {
	// /metrics is matched by hand rather than by a second ServeMux in front
	// of the daemon's own: that lookup cost every request of every daemon.
	var s *Server
	root := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			h.ServeHTTP(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			problem.WriteStatus(w, r, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed on /metrics")
			return
		}
		r.Pattern = "GET /metrics"
		s.metrics.ServeHTTP(w, r)
	})
	m := newMetrics(reg)
	s = &Server{
		metrics:         promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}),
		ln:              ln,
		log:             log,
		ShutdownTimeout: DefaultShutdownTimeout,
		BodyTimeout:     DefaultBodyTimeout,
		BulkBodyTimeout: DefaultBulkBodyTimeout,
		IsBulk:          IsBulkRoute,
		MaxConns:        DefaultMaxConns,
	}
	limited := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.bodyDeadline(w, r)
		root.ServeHTTP(w, r)
	})
	s.srv = &http.Server{
		Handler:           instrument(limited, log, m),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	return s
}

// Addr is the bound address, useful when listening on ":0".
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL is a URL that reaches the server from this host (see LocalURL):
// https:// once UseTLS was called.
func (s *Server) URL() string {
	if s.tls != nil {
		return SchemeURL("https", s.ln.Addr())
	}
	return LocalURL(s.ln.Addr())
}

// LocalURL is "http://" plus addr, with loopback for an unspecified host
// (":8376" binds every address; peers on this host reach it as
// 127.0.0.1:8376).
func LocalURL(addr net.Addr) string { return SchemeURL("http", addr) }

// SchemeURL is LocalURL with another scheme ("https").
func SchemeURL(scheme string, addr net.Addr) string {
	if ta, ok := addr.(*net.TCPAddr); ok && ta.IP.IsUnspecified() {
		return scheme + "://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(ta.Port))
	}
	return scheme + "://" + addr.String()
}

// Run serves until ctx is cancelled, then stops accepting connections and waits
// up to ShutdownTimeout for in-flight requests, using a fresh context so accepted
// requests are not cut off.
func (s *Server) Run(ctx context.Context) error {
	if err := RaiseFileLimit(s.log); err != nil {
		s.log.Warn("rlimit_nofile_not_raised", "err", err)
	}
	ln := s.ln
	if s.MaxConns > 0 {
		ln = &limitListener{Listener: s.ln, max: int64(s.MaxConns), log: s.log}
	}
	if s.tls != nil {
		// Outside the cap: a connection over it is closed before any
		// handshake costs the daemon a signature.
		ln = tls.NewListener(ln, s.tls)
	}
	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(ln) }()
	s.log.Info("http_listening", "addr", s.Addr(), "max_connections", s.MaxConns, "tls", s.tls != nil)
	select {
	case err := <-errc:
		return fmt.Errorf("http serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.ShutdownTimeout)
	defer cancel()
	err := s.srv.Shutdown(sctx)
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("http shutdown: %w", err)
	}
	s.log.Info("http_stopped", "addr", s.Addr())
	return nil
}

// Close releases the listener of a server that will not be run.
func (s *Server) Close() error { return s.ln.Close() }

// IsLoopbackURL reports whether raw names this host by a loopback address
// (or localhost).
// It is token.Hosts's rule with no hosts listed: one definition of "this
// host" for the tokens hsm and hmnfd send and for callback URLs.
func IsLoopbackURL(raw string) bool { return token.Hosts(nil).AllowsURL(raw) }

// CallbackURL is the URL a peer at peerURL reaches this server's path on
// (scheme "http" or "https"): the loopback URL when the peer is on this
// host, else <scheme>://<hostname>:<port>.
func CallbackURL(scheme, peerURL string, addr net.Addr, path string) string {
	if IsLoopbackURL(peerURL) {
		return SchemeURL(scheme, addr) + path
	}
	_, port, _ := net.SplitHostPort(addr.String())
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	return scheme + "://" + net.JoinHostPort(host, port) + path
}
