package httpserver

import (
	"net/http"
	"strings"
)

// Prefix maps a path prefix of the CSM API gateway (`/apis/sls/v1`) to the
// daemon's own base path (`/v1`). CSM clients (the cray CLI, site scripts)
// call the services through the gateway; a daemon that also answers under
// the gateway's prefix can be pointed at directly.
type Prefix struct {
	Gateway, Base string
}

// WithPrefixes serves a request under a Gateway prefix as if it had come
// to the Base path; other requests go to h unchanged.
func WithPrefixes(h http.Handler, prefixes ...Prefix) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/apis/") {
			for _, p := range prefixes {
				if rest, ok := cutPrefix(r.URL.Path, p.Gateway); ok {
					// r is changed in place, not copied: the middleware
					// around h reads the route the mux records in r.
					r.URL.Path = p.Base + rest
					if raw, ok := cutPrefix(r.URL.RawPath, p.Gateway); ok {
						r.URL.RawPath = p.Base + raw
					} else {
						r.URL.RawPath = ""
					}
					break
				}
			}
		}
		h.ServeHTTP(w, r)
	})
}

// cutPrefix is strings.CutPrefix on whole path segments.
func cutPrefix(path, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(path, prefix)
	if !ok || (rest != "" && rest[0] != '/') {
		return "", false
	}
	return rest, true
}
