package heartbeat

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/hmsuite/hms/internal/pause"
	"github.com/prometheus/client_golang/prometheus"
)

// Retry backoff of every outbound queue.
const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 30 * time.Second
	// flushTimeout bounds the last delivery attempt at shutdown.
	flushTimeout = 5 * time.Second
)

// deliverFunc sends a batch and returns the changes that must be tried again.
type deliverFunc func(ctx context.Context, batch []Change) (retry []Change)

// queue coalesces changes per node, so that only the latest change of a node
// is ever delivered, and delivers them in batches with retry and backoff. A
// slow or dead receiver costs one map entry per node, never a blocked tracker.
type queue struct {
	name    string
	mu      sync.Mutex
	pending map[string]Change
	wake    chan struct{}
	deliver deliverFunc
	log     *slog.Logger
	// done, if set, is told which changes the receiver took (or refused for
	// good), so they need not be sent again after a restart.
	done func([]Change)

	delivered, retried prometheus.Counter
}

func newQueue(name string, deliver deliverFunc, log *slog.Logger, reg prometheus.Registerer) *queue {
	q := &queue{
		name: name, pending: map[string]Change{}, wake: make(chan struct{}, 1), deliver: deliver, log: log,
		delivered: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hbtd_queue_delivered_total", Help: "Changes delivered, by receiver.",
			ConstLabels: prometheus.Labels{"sink": name},
		}),
		retried: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hbtd_queue_retries_total", Help: "Changes whose delivery failed and was retried, by receiver.",
			ConstLabels: prometheus.Labels{"sink": name},
		}),
	}
	if reg != nil {
		reg.MustRegister(q.delivered, q.retried, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "hbtd_queue_pending", Help: "Changes waiting for delivery, by receiver.",
			ConstLabels: prometheus.Labels{"sink": name},
		}, func() float64 { return float64(q.Len()) }))
	}
	return q
}

// Enqueue adds changes; a node's newer change replaces its older pending one.
func (q *queue) Enqueue(changes ...Change) {
	q.mu.Lock()
	for _, c := range changes {
		q.pending[c.XName] = c
	}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// offer enqueues changes, or, when drop is set, discards them and tells done
// they are settled.
func (q *queue) offer(drop bool, changes []Change) {
	// A forgotten node (Tracker.Forget) has nothing to tell. The slice is
	// every sink's: filter a copy.
	if slices.ContainsFunc(changes, forgotten) {
		changes = slices.DeleteFunc(slices.Clone(changes), forgotten)
	}
	switch {
	case !drop:
		q.Enqueue(changes...)
	case q.done != nil && len(changes) > 0:
		q.done(changes)
	}
}

// forgotten reports a change that only forgets the node (see Tracker.Forget).
func forgotten(c Change) bool { return c.To == Unknown }

// Len is the number of nodes with a pending change.
func (q *queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.pending)
}

func (q *queue) take() []Change {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.pending) == 0 {
		return nil
	}
	out := make([]Change, 0, len(q.pending))
	for _, c := range q.pending {
		out = append(out, c)
	}
	clear(q.pending)
	return out
}

// requeue puts failed changes back unless the node has changed again since.
func (q *queue) requeue(changes []Change) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, c := range changes {
		if _, newer := q.pending[c.XName]; !newer {
			q.pending[c.XName] = c
		}
	}
}

// Run delivers pending changes until ctx is cancelled, then makes one last
// bounded attempt with a fresh context.
func (q *queue) Run(ctx context.Context) error {
	backoff := minBackoff
	for {
		select {
		case <-ctx.Done():
		case <-q.wake:
		}
		if ctx.Err() != nil {
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
			defer cancel()
			q.flush(fctx)
			return nil
		}
		if q.flush(ctx) {
			backoff = minBackoff
			continue
		}
		q.log.Warn("delivery_retry", "sink", q.name, "pending", q.Len(), "backoff", backoff)
		pause.For(ctx, backoff) // an ended ctx is seen at the top of the loop
		backoff = min(backoff*2, maxBackoff)
		q.poke()
	}
}

// without returns the changes of batch that are not in retry.
func without(batch, retry []Change) []Change {
	if len(retry) == 0 {
		return batch
	}
	again := make(map[string]bool, len(retry))
	for _, c := range retry {
		again[c.XName] = true
	}
	out := make([]Change, 0, len(batch)-len(retry))
	for _, c := range batch {
		if !again[c.XName] {
			out = append(out, c)
		}
	}
	return out
}

func (q *queue) poke() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// flush delivers until nothing is pending; it reports false if a delivery failed.
func (q *queue) flush(ctx context.Context) bool {
	for {
		batch := q.take()
		if len(batch) == 0 {
			return true
		}
		retry := q.deliver(ctx, batch)
		q.delivered.Add(float64(len(batch) - len(retry)))
		if q.done != nil {
			q.done(without(batch, retry))
		}
		if len(retry) > 0 {
			q.retried.Add(float64(len(retry)))
			q.requeue(retry)
			return false
		}
	}
}
