package httpserver

import (
	"context"
	"net/http"
)

// ReadyFunc reports whether a dependency is ready; a nil error means ready.
type ReadyFunc func(ctx context.Context) error

// NoContent answers 204, as the HMS liveness and readiness probes do.
func NoContent(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }

// Readiness answers 204 when every check passes, else 503 problem+json naming
// the first failure.
func Readiness(checks ...ReadyFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for _, c := range checks {
			if err := c(r.Context()); err != nil {
				writeUnavailable(w, r, err)
				return
			}
		}
		w.WriteHeader(http.StatusNoContent)
	}
}
