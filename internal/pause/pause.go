// Package pause waits without outliving a context: the retry backoffs,
// poll intervals and simulated latencies of the suite's loops.
package pause

import (
	"context"
	"time"
)

// For waits d, or less if ctx ends first; it reports whether d elapsed
// (false: ctx ended, the caller should stop).
func For(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
