// Package daemontest runs a daemon in a test and checks its answers.
package daemontest

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Run starts run (a daemon's Run) in the background and returns stop, which
// ends it, waits for it and reports its error on t. stop may be called
// before the test ends (to flush what the daemon does on the way out); it
// runs once, at the latest when the test ends.
func Run(t testing.TB, run func(context.Context) error) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	stop = sync.OnceFunc(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	t.Cleanup(stop)
	return stop
}

// Call is one request a test sends a running daemon, and what the answer
// must hold.
type Call struct {
	Method, Path, Body string
	Want               string // in the body of the answer, a 200
}

// Check sends calls to base (the daemon's URL) in turn and reports on t
// each answer that is not a 200 holding its Want, or that holds one of
// absent (a password that must not be shown).
func Check(t testing.TB, base string, calls []Call, absent ...string) {
	t.Helper()
	for _, c := range calls {
		req, err := http.NewRequestWithContext(t.Context(), c.Method, base+c.Path, strings.NewReader(c.Body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		shown := slices.ContainsFunc(absent, func(s string) bool { return strings.Contains(string(body), s) })
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), c.Want) || shown {
			t.Errorf("%s %s = %d %s, want 200 with %q and none of %q", c.Method, c.Path, resp.StatusCode, body, c.Want, absent)
		}
	}
}
