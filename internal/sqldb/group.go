package sqldb

import (
	"context"
	"fmt"
	"sync"
)

// Group commits concurrent writes together (group commit): the first
// writer to arrive leads and commits what is queued, up to a bound, in one
// call of the commit function (one transaction: one fsync for all); then
// it hands the lead to the first writer still queued, so no writer waits
// on rounds after its own. A write returns only once its round committed;
// there is no background goroutine. With one writer at a time a round is
// that write alone, so a lone client pays nothing for the grouping.
//
// HSM's component writes keep a committer of their own (they plan against
// an overlay of the round); this one serves writes that are independent
// rows (SLS hardware, HSM Ethernet interfaces).
type Group[T any] struct {
	commit func(ctx context.Context, items []T) []error
	most   int

	mu      sync.Mutex
	queue   []*groupJob[T]
	leading bool
}

type groupJob[T any] struct {
	item T
	err  error
	lead bool // woken to lead the next round, not with its result
	wake chan struct{}
}

// NewGroup returns a Group whose rounds commit at most most items (0: no
// bound) with commit, which returns one error per item, in order (nil: the
// item is committed). commit runs with a context that is not cancelled
// when the leading writer's is: the round carries other writers too.
func NewGroup[T any](most int, commit func(ctx context.Context, items []T) []error) *Group[T] {
	return &Group[T]{commit: commit, most: most}
}

// Do queues item for the next round and returns its error once that round
// has committed. The write is not abandoned when ctx is cancelled: its
// round may already hold it, and the caller learns the real outcome.
func (g *Group[T]) Do(ctx context.Context, item T) error {
	j := &groupJob[T]{item: item, wake: make(chan struct{})}
	g.mu.Lock()
	g.queue = append(g.queue, j)
	lead := !g.leading
	g.leading = true
	g.mu.Unlock()
	if !lead {
		<-j.wake
		if !j.lead {
			return j.err
		}
	}
	g.round(context.WithoutCancel(ctx))
	return j.err
}

// done wakes j's writer with its result; a writer woken to lead (its
// channel closed already) is running this round itself.
func (j *groupJob[T]) done() {
	if !j.lead {
		close(j.wake)
	}
}

// round commits the head of the queue (which holds the leader's own job)
// and passes the lead on. Should commit panic, the round's writers get an
// error and the lead is passed on before the panic goes on.
func (g *Group[T]) round(ctx context.Context) {
	g.mu.Lock()
	n := len(g.queue)
	if g.most > 0 {
		n = min(n, g.most)
	}
	batch := g.queue[:n:n]
	g.queue = g.queue[n:]
	g.mu.Unlock()
	finished := false
	defer func() {
		if !finished {
			p := recover()
			for _, j := range batch {
				j.err = fmt.Errorf("group commit aborted: %v", p)
				j.done()
			}
			g.handOff()
			panic(p)
		}
	}()
	items := make([]T, len(batch))
	for i, j := range batch {
		items[i] = j.item
	}
	errs := g.commit(ctx, items)
	for i, j := range batch {
		if i < len(errs) {
			j.err = errs[i]
		}
		j.done()
	}
	finished = true
	g.handOff()
}

// handOff wakes the first queued writer to lead the next round, or ends
// the lead when none is queued.
func (g *Group[T]) handOff() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.queue) == 0 {
		g.leading = false
		return
	}
	next := g.queue[0]
	next.lead = true
	close(next.wake)
}
