package redfishsim

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/hmsuite/hms/internal/pause"
)

// Faults make a BMC misbehave the way real ones do. The zero value injects
// nothing. Path patterns are resource paths such as
// "/redfish/v1/Systems/*/EthernetInterfaces": a "*" segment matches any one
// segment, and a pattern matches the path itself and everything below it.
type Faults struct {
	// Latency delays every response, including 401s and injected errors.
	Latency time.Duration
	// Hang makes every request wait, unanswered, until the client gives up
	// (its request context ends) or the BMC stops.
	Hang bool
	// ErrorRate is the fraction of requests (0 to 1) answered with a 500
	// Redfish error before authentication is even looked at.
	ErrorRate float64
	// ErrorPaths are answered with a 500 Redfish error.
	ErrorPaths []string
	// GarbagePaths are answered (after authentication) with 200, a JSON
	// content type and a body that is not JSON: the resource cut in half.
	GarbagePaths []string
	// MissingPaths are answered (after authentication) with 404, as if the
	// resources did not exist; links to them stay in place.
	MissingPaths []string
	// PowerDelay is how long a ComputerSystem.Reset takes to change
	// PowerState (the reset is accepted at once).
	PowerDelay time.Duration
	// IgnoreGraceful accepts GracefulShutdown and GracefulRestart and
	// does nothing, as a hung OS does; ForceOff must follow.
	IgnoreGraceful bool
	// OmitAllowableValues leaves ResetType@Redfish.AllowableValues out of
	// the resources served (the reset types stay as they were).
	OmitAllowableValues bool
}

// Validate checks the ranges and the path patterns.
func (f Faults) Validate() error {
	if f.Latency < 0 || f.PowerDelay < 0 {
		return fmt.Errorf("redfishsim: fault latency %v is negative", f.Latency)
	}
	if f.ErrorRate < 0 || f.ErrorRate > 1 {
		return fmt.Errorf("redfishsim: fault error rate %v is not within 0..1", f.ErrorRate)
	}
	for _, list := range [][]string{f.ErrorPaths, f.GarbagePaths, f.MissingPaths} {
		for _, p := range list {
			if !strings.HasPrefix(p, "/") {
				return fmt.Errorf("redfishsim: fault path %q does not start with /", p)
			}
		}
	}
	return nil
}

// matchAny reports whether canonical path p matches one of the patterns.
func matchAny(patterns []string, p string) bool {
	for _, pat := range patterns {
		if matchPattern(pat, p) {
			return true
		}
	}
	return false
}

// matchPattern reports whether canonical path p is the resource named by
// pattern or lies below it; "*" matches exactly one segment.
func matchPattern(pattern, p string) bool {
	pattern = Canonical(pattern)
	for {
		if pattern == "/" {
			return true
		}
		pseg, prest := cutSegment(pattern)
		seg, rest := cutSegment(p)
		if seg == "" || (pseg != "*" && pseg != seg) {
			return false
		}
		if prest == "" {
			return true
		}
		pattern, p = prest, rest
		if p == "" {
			return false
		}
	}
}

// cutSegment splits "/a/b/c" into "a" and "/b/c" ("" when nothing is left).
func cutSegment(p string) (seg, rest string) {
	p = strings.TrimPrefix(p, "/")
	if i := strings.IndexByte(p, '/'); i >= 0 {
		return p[:i], p[i:]
	}
	return p, ""
}

// preAuthFaults applies the faults that strike before authentication. It
// reports whether the request has been dealt with.
func (b *BMC) preAuthFaults(w http.ResponseWriter, r *http.Request, f *Faults) bool {
	ctx := r.Context()
	if f.Hang {
		<-ctx.Done()
		abort(w)
		return true
	}
	if f.Latency > 0 && !pause.For(ctx, f.Latency) {
		abort(w)
		return true
	}
	if matchAny(f.ErrorPaths, r.URL.Path) || (f.ErrorRate > 0 && b.chance() < f.ErrorRate) {
		writeError(w, http.StatusInternalServerError, "InternalError", "The request failed due to an internal service error (injected fault).")
		return true
	}
	return false
}

// postAuthFaults applies the faults that strike after authentication.
func (b *BMC) postAuthFaults(w http.ResponseWriter, r *http.Request, f *Faults) bool {
	p := r.URL.Path
	if matchAny(f.MissingPaths, p) {
		writeError(w, http.StatusNotFound, "ResourceMissingAtURI", fmt.Sprintf("The resource at the URI %s was not found.", p))
		return true
	}
	if matchAny(f.GarbagePaths, p) {
		body, _, ok := b.lookup(p)
		if !ok || len(body) < 2 {
			body = []byte("<html><body>Service Unavailable</body></html>")
		} else {
			body = body[:len(body)/2]
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
		return true
	}
	return false
}

// abort drops the connection of a request given up on, so that a BMC being
// stopped does not answer a hung request with an empty 200.
func abort(w http.ResponseWriter) {
	if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
		_ = conn.Close()
	}
}

// chance draws a number in [0,1) from the BMC's seeded generator.
func (b *BMC) chance() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.rng.Float64()
}
