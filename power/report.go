package power

import (
	"context"
	"slices"
	"sync"
	"time"
)

// reporter tells HSM the power state of the components whose tasks
// succeeded soon after each task ends, rather than when the whole
// transition does: a node that a straggler in its transition would hold
// back is Off (or On) in HSM, and its SCN sent, within an interval. The
// tasks that end within one interval (Config.ReportInterval) are reported
// together, so a transition of 10,000 nodes makes a few HSM calls, not
// 10,000.
type reporter struct {
	every time.Duration
	after func(time.Duration) <-chan time.Time
	push  func(ctx context.Context, ids []string)
	// pushing is held while a batch is reported, so flush waits for the
	// report under way.
	pushing sync.Mutex

	mu      sync.Mutex
	pending map[string]struct{}
	kick    chan struct{} // one buffered: something is pending
}

func newReporter(every time.Duration, after func(time.Duration) <-chan time.Time, push func(context.Context, []string)) *reporter {
	return &reporter{every: every, after: after, push: push, pending: map[string]struct{}{}, kick: make(chan struct{}, 1)}
}

// add queues ids for the next report.
func (r *reporter) add(ids ...string) {
	if len(ids) == 0 {
		return
	}
	r.mu.Lock()
	for _, id := range ids {
		r.pending[id] = struct{}{}
	}
	r.mu.Unlock()
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// run reports what is queued an interval after the first of it was, until
// ctx ends.
func (r *reporter) run(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.kick:
		}
		select {
		case <-ctx.Done():
			return nil
		case <-r.after(r.every):
		}
		r.pushing.Lock()
		if ids := r.take(nil); len(ids) > 0 {
			r.push(ctx, ids)
		}
		r.pushing.Unlock()
	}
}

// flush reports at once those of ids still queued, once the report under
// way (if any) has ended: when it returns HSM has been told of them all.
func (r *reporter) flush(ctx context.Context, ids []string) {
	r.pushing.Lock()
	defer r.pushing.Unlock()
	if left := r.take(ids); len(left) > 0 {
		r.push(ctx, left)
	}
}

// take removes the queued components among ids (all of them when ids is
// nil) and returns them, sorted.
func (r *reporter) take(ids []string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	if ids == nil {
		out = make([]string, 0, len(r.pending))
		for id := range r.pending {
			out = append(out, id)
		}
		clear(r.pending)
	} else {
		for _, id := range ids {
			if _, ok := r.pending[id]; ok {
				out = append(out, id)
				delete(r.pending, id)
			}
		}
	}
	slices.Sort(out)
	return out
}
