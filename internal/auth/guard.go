package auth

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hmsuite/hms/internal/problem"
)

// guard checks every request against a daemon's table before its handler.
type guard struct {
	v      *Verifier
	shadow bool
	realm  string
	routes *http.ServeMux // the table's patterns, each answered by check
	next   http.Handler
	log    *slog.Logger
	// decisions counts requests by outcome (allowed, unauthenticated,
	// forbidden) and whether they were refused (false in shadow mode).
	decisions *prometheus.CounterVec
}

// Wrap returns next guarded by the table t, or next itself when auth is off.
// Wrap it inside the gateway prefixes (httpserver.WithPrefixes), so the
// guard sees the daemon's own paths. reg may be nil. A daemon uses
// NewDaemon instead, which guards /metrics with the same verifier.
func (c Config) Wrap(next http.Handler, t Table, log *slog.Logger, reg prometheus.Registerer) (http.Handler, error) {
	d, err := c.NewDaemon(t, log, reg)
	if err != nil {
		return nil, err
	}
	return d.Wrap(next), nil
}

func newGuard(v *Verifier, shadow bool, t Table, next http.Handler, log *slog.Logger, reg prometheus.Registerer) *guard {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return guardFor(v, shadow, t, next, log, newDecisions(reg))
}

// newDecisions is hms_auth_decisions_total, registered on reg unless nil.
func newDecisions(reg prometheus.Registerer) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "hms_auth_decisions_total",
		Help: "Requests checked by the auth guard, by decision and whether the request was refused (not in shadow mode)."},
		[]string{"decision", "refused"})
	if reg != nil {
		reg.MustRegister(c)
	}
	return c
}

func guardFor(v *Verifier, shadow bool, t Table, next http.Handler, log *slog.Logger, decisions *prometheus.CounterVec) *guard {
	g := &guard{v: v, shadow: shadow, realm: t.Daemon, routes: http.NewServeMux(), next: next, log: log, decisions: decisions}
	for _, r := range t.Routes {
		g.routes.Handle(r.Pattern, g.check(r.Access))
	}
	// A route the table lacks is admin-only: the guard fails closed.
	unlisted := g.check(AdminOnly())
	g.routes.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Pattern = g.daemonPattern(r)
		unlisted.ServeHTTP(w, r)
	}))
	return g
}

// matcher is a daemon's mux that names the pattern it routes a request to
// ("" for none): httpserver.Mux.
type matcher interface {
	Match(r *http.Request) string
}

// daemonPattern labels a request the table has no line for, in the
// metrics of a refusal (a request passed on gets its label from the
// daemon's mux): the pattern the daemon would serve it with, or "" (the
// metrics' "unmatched"), never the guard's catch-all "/". Labels stay
// bounded: they are the daemon's patterns.
func (g *guard) daemonPattern(r *http.Request) string {
	if m, ok := g.next.(matcher); ok {
		return m.Match(r)
	}
	return ""
}

// ServeHTTP routes r through the table's mux, which sets r's path values
// for the XnameFuncs; the daemon's mux routes it again.
func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) { g.routes.ServeHTTP(w, r) }

func (g *guard) check(a Access) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.open {
			// An optional route's handler gets the caller of a valid
			// token; it decides for the others.
			var p Principal
			known := false
			if a.optional {
				var err error
				p, err = g.authenticate(r)
				known = err == nil
			}
			g.pass(w, r, p, known)
			return
		}
		p, err := g.authenticate(r)
		if err != nil {
			g.refuse(w, r, http.StatusUnauthorized, p, err)
			return
		}
		if ok, why := a.allows(p, r); !ok {
			g.refuse(w, r, http.StatusForbidden, p, errors.New(why))
			return
		}
		g.decisions.WithLabelValues("allowed", "false").Inc()
		g.pass(w, r, p, true)
	})
}

// pass hands r to the daemon's handler, clearing the pattern the table's
// mux set so the daemon's mux and metrics record their own. With a caller
// (known), the handler gets a copy of r whose context carries it
// (FromContext): a request's context is set only so. The daemon's mux
// records its pattern on that copy, and the metrics middleware reads the
// request it holds, so the pattern is written back to r. Open routes
// (bss's boot script and cloud-init) pass r itself: nothing is copied.
func (g *guard) pass(w http.ResponseWriter, r *http.Request, p Principal, known bool) {
	r.Pattern = ""
	if !known {
		g.next.ServeHTTP(w, r)
		return
	}
	r2 := r.WithContext(WithPrincipal(r.Context(), p))
	g.next.ServeHTTP(w, r2)
	r.Pattern = r2.Pattern
}

func (g *guard) authenticate(r *http.Request) (Principal, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return Principal{}, errors.New("no Authorization header")
	}
	scheme, raw, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(raw) == "" {
		return Principal{}, errors.New("the Authorization header is not a Bearer token")
	}
	return g.v.Verify(r.Context(), strings.TrimSpace(raw))
}

// refuse answers 401 or 403 (problem+json, with WWW-Authenticate as RFC 6750
// says), or in shadow mode logs what it would have answered and passes r on.
func (g *guard) refuse(w http.ResponseWriter, r *http.Request, status int, p Principal, err error) {
	decision := "unauthenticated"
	if status == http.StatusForbidden {
		decision = "forbidden"
	}
	if g.shadow {
		g.decisions.WithLabelValues(decision, "false").Inc()
		g.log.Warn("auth_shadow_refusal", "method", r.Method, "path", r.URL.Path, "status", status,
			"sub", p.Subject, "remote", r.RemoteAddr, "reason", err.Error())
		g.pass(w, r, Principal{}, false)
		return
	}
	g.decisions.WithLabelValues(decision, "true").Inc()
	g.log.Info("auth_refusal", "method", r.Method, "path", r.URL.Path, "status", status,
		"sub", p.Subject, "remote", r.RemoteAddr, "reason", err.Error())
	challenge := `Bearer realm="` + g.realm + `"`
	detail := "a valid Bearer token is required: " + err.Error()
	switch {
	case status == http.StatusForbidden:
		challenge += `, error="insufficient_scope"`
		detail = err.Error()
	case r.Header.Get("Authorization") != "":
		challenge += `, error="invalid_token"`
	}
	w.Header().Set("WWW-Authenticate", challenge)
	problem.WriteStatus(w, r, status, detail)
}
