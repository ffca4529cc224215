package httpserver

import (
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hmsuite/hms/internal/problem"
)

type metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	// children caches the label-bound counter and histogram per (route,
	// method, code): resolving labels costs hashing and a locked map lookup
	// per request, a fifth of a trivial request's time.
	children sync.Map // routeKey -> *routeMetrics
}

type routeKey struct {
	route, method string
	code          int
}

type routeMetrics struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

func (m *metrics) child(route, method string, code int) *routeMetrics {
	k := routeKey{route, method, code}
	if c, ok := m.children.Load(k); ok {
		return c.(*routeMetrics)
	}
	c := &routeMetrics{
		requests: m.requests.WithLabelValues(route, method, strconv.Itoa(code)),
		duration: m.duration.WithLabelValues(route),
	}
	actual, _ := m.children.LoadOrStore(k, c)
	return actual.(*routeMetrics)
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "http_requests_total",
			Help: "HTTP requests served, by route pattern, method and status code.",
		}, []string{"route", "method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "http_request_duration_seconds",
			Help:    "HTTP request latency by route pattern.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10},
		}, []string{"route"}),
	}
	reg.MustRegister(m.requests, m.duration)
	return m
}

// statusWriter records the status code written by a handler, and carries
// the problem Style a Mux sets for the request (problem.StyleCarrier).
type statusWriter struct {
	http.ResponseWriter
	code  int
	bytes int
	style *problem.Style
}

// ProblemStyle is the style the Mux routing the request set (nil: none).
func (w *statusWriter) ProblemStyle() *problem.Style { return w.style }

// carrierOf is the statusWriter w is or wraps (nil: none).
func carrierOf(w http.ResponseWriter) *statusWriter {
	for {
		switch v := w.(type) {
		case *statusWriter:
			return v
		case interface{ Unwrap() http.ResponseWriter }:
			w = v.Unwrap()
		default:
			return nil
		}
	}
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer (Flush etc.).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// instrument logs each request at debug level (warn for 5xx) and records metrics
// labelled by the matched route pattern, never the raw path, so label cardinality
// stays bounded.
func instrument(next http.Handler, log *slog.Logger, m *metrics) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		if sw.code == 0 {
			sw.code = http.StatusOK
		}
		elapsed := time.Since(start)
		route := r.Pattern
		if route == "" {
			route = "unmatched"
		}
		c := m.child(route, r.Method, sw.code)
		c.requests.Inc()
		c.duration.Observe(elapsed.Seconds())
		level := slog.LevelDebug
		if sw.code >= 500 {
			level = slog.LevelWarn
		}
		if log.Enabled(r.Context(), level) {
			log.LogAttrs(r.Context(), level, "http_request",
				slog.String("method", r.Method), slog.String("path", r.URL.Path),
				slog.Int("status", sw.code), slog.Int("bytes", sw.bytes),
				slog.Duration("elapsed", elapsed), slog.String("remote", r.RemoteAddr))
		}
	})
}
