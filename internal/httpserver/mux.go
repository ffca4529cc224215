package httpserver

import (
	"net/http"
	"strings"

	"github.com/hmsuite/hms/internal/problem"
)

// Mux is an http.ServeMux that remembers the patterns registered on it (so a
// test can compare them with the daemon's OpenAPI document) and answers an
// unknown path (404) or method (405, with Allow) with problem+json rather
// than ServeMux's plain text.
//
// The shipped services answer both with gorilla/mux's text 404 (a wrong
// method mostly gets a 404 too); we keep the status a client can act on and
// the suite's one error format.
type Mux struct {
	mux      *http.ServeMux
	patterns []string
	style    problem.Style
	styled   bool // style is not the zero Style
}

// NewMux returns an empty Mux whose 404 and 405 answers are shaped by style,
// as are the problems its handlers write with problem.Write and
// problem.WriteStatus.
func NewMux(style problem.Style) *Mux {
	styled := style.NoInstance || style.Instance != nil || len(style.Titles) > 0
	m := &Mux{mux: http.NewServeMux(), style: style, styled: styled}
	// "/" matches every request no other pattern matches, whatever its
	// method, so ServeMux never writes its text answers; unmatched finds out
	// whether the path exists under another method.
	m.mux.HandleFunc("/", m.unmatched)
	return m
}

// Handle registers h for pattern, as http.ServeMux.Handle.
func (m *Mux) Handle(pattern string, h http.Handler) {
	m.mux.Handle(pattern, h)
	m.patterns = append(m.patterns, pattern)
}

// HandleFunc registers f for pattern, as http.ServeMux.HandleFunc.
func (m *Mux) HandleFunc(pattern string, f func(http.ResponseWriter, *http.Request)) {
	m.Handle(pattern, http.HandlerFunc(f))
}

// Patterns lists the registered patterns in registration order.
func (m *Mux) Patterns() []string { return append([]string(nil), m.patterns...) }

// Match is the registered pattern r would be routed to, or "" for none.
func (m *Mux) Match(r *http.Request) string {
	if _, p := m.mux.Handler(r); p != "/" {
		return p
	}
	return ""
}

// ServeHTTP routes r with the Mux's style, when it has one (the zero Style
// costs nothing), set on the response writer the server wrapped the
// response in (see problem.StyleCarrier), or else in a copy of r whose
// context carries it (a Mux served by another server, as in tests).
func (m *Mux) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !m.styled {
		m.mux.ServeHTTP(w, r)
		return
	}
	if sw := carrierOf(w); sw != nil {
		prev := sw.style
		sw.style = &m.style
		m.mux.ServeHTTP(w, r)
		sw.style = prev
		return
	}
	r2 := r.WithContext(problem.WithStyle(r.Context(), m.style))
	m.mux.ServeHTTP(w, r2)
	// The router records the matched route on the copy; the metrics
	// middleware reads it from the request it holds.
	r.Pattern = r2.Pattern
}

func (m *Mux) unmatched(w http.ResponseWriter, r *http.Request) {
	r.Pattern = "" // metrics label it "unmatched", not "/"
	var allow []string
	for _, method := range []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"} {
		if method == r.Method {
			continue
		}
		probe := r.WithContext(r.Context())
		probe.Method = method
		if m.Match(probe) != "" {
			allow = append(allow, method)
		}
	}
	if len(allow) == 0 {
		m.style.WriteStatus(w, r, http.StatusNotFound, "no route for "+r.URL.Path)
		return
	}
	joined := strings.Join(allow, ", ")
	w.Header().Set("Allow", joined)
	m.style.WriteStatus(w, r, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed on "+r.URL.Path+"; allowed: "+joined)
}
