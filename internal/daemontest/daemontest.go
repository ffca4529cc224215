// Package daemontest runs a daemon in a test.
package daemontest

import (
	"context"
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
