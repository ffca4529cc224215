package discovery

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hmsuite/hms/internal/problem"
)

// Walker reads one switch's forwarding table (SNMPWalker; tests may walk
// anything that answers SNMP).
type Walker interface {
	Walk(ctx context.Context, sw Switch) (Table, WalkStats, error)
}

// FDB caches the forwarding table of each switch. A question about a MAC
// seen at time since is answered from a table read at or after since and
// younger than the TTL; otherwise the switch is walked. Walks of one switch
// are coalesced: while one runs, every question that it cannot answer
// (asked after it started) waits for a single next walk, so 500 leases at
// once cost each switch at most two walks. A switch's walks start at least
// a minimum interval apart (a storm of leases, each asking after the last
// walk began, would otherwise walk every switch back to back), and at most
// Concurrency switches are walked at once.
type FDB struct {
	walker Walker
	ttl    time.Duration
	gap    time.Duration // least time between the starts of two walks of a switch
	now    func() time.Time
	sem    chan struct{}
	obs    func(sw Switch, st WalkStats, took time.Duration, err error)
	stop   chan struct{} // closed by Stop
	once   sync.Once

	mu     sync.Mutex
	states map[string]*switchState
}

// switchState is one switch's cached table and its walks.
type switchState struct {
	table   Table
	at      time.Time // when the cached walk started
	err     error
	running *walk     // in progress, or about to begin
	next    *walk     // queued behind running
	last    time.Time // when the last walk began
}

// walk is one walk of a switch; done is closed when table/err are set.
type walk struct {
	// begun is set when the walk begins reading the switch, at start: its
	// table holds what the switch knew then. Until it has begun, it
	// answers any question (it will read the switch after it was asked).
	begun bool
	start time.Time
	done  chan struct{}
	table Table
	err   error
}

// NewFDB returns a cache over walker whose walks of one switch start gap
// apart at least; now is the clock (time.Now if nil), obs (optional) is
// told of every finished walk.
func NewFDB(walker Walker, ttl, gap time.Duration, concurrency int, now func() time.Time,
	obs func(Switch, WalkStats, time.Duration, error)) *FDB {
	if now == nil {
		now = time.Now
	}
	if concurrency <= 0 {
		concurrency = 8
	}
	if obs == nil {
		obs = func(Switch, WalkStats, time.Duration, error) {}
	}
	return &FDB{walker: walker, ttl: ttl, gap: gap, now: now, sem: make(chan struct{}, concurrency), obs: obs,
		stop: make(chan struct{}), states: map[string]*switchState{}}
}

// errFDBStopped answers the walks that had not begun when Stop was called.
var errFDBStopped = fmt.Errorf("switch walk: %w: discovery is stopping", problem.ErrUnavailable)

// Stop ends the waits of walks that have not begun, for their minimum
// interval or for a concurrency slot (they fail with errFDBStopped); a
// walk under way ends by the walker's own timeouts.
func (f *FDB) Stop() { f.once.Do(func() { close(f.stop) }) }

// Table returns sw's table as read at or after since (walking it if the
// cache is older, or older than the TTL).
func (f *FDB) Table(ctx context.Context, sw Switch, since time.Time) (Table, error) {
	ts, errs := f.Tables(ctx, []Switch{sw}, since)
	return ts[0], errs[0]
}

// Tables returns the table of each of sws (in their order) as read at or
// after since, with the error of each switch that could not be walked.
// The walks the question needs are all started (or joined) before it waits
// for any, so it takes as long as the slowest, not as long as all of them
// one after the other, and every question asked meanwhile shares them.
func (f *FDB) Tables(ctx context.Context, sws []Switch, since time.Time) ([]Table, []error) {
	ts, errs := make([]Table, len(sws)), make([]error, len(sws))
	walks := make([]*walk, len(sws))
	f.mu.Lock()
	now := f.now()
	for i, sw := range sws {
		s := f.states[sw.Xname]
		if s == nil {
			s = &switchState{}
			f.states[sw.Xname] = s
		}
		if !s.at.IsZero() && !s.at.Before(since) && now.Sub(s.at) < f.ttl {
			ts[i], errs[i] = s.table, s.err
			continue
		}
		walks[i] = f.join(sw, s, since)
	}
	f.mu.Unlock()
	for i, w := range walks {
		if w == nil {
			continue
		}
		select {
		case <-w.done:
			ts[i], errs[i] = w.table, w.err
		case <-ctx.Done():
			ts[i], errs[i] = nil, ctx.Err()
		}
	}
	return ts, errs
}

// join returns the walk that answers a question asked at since: the running
// one if it has not begun reading the switch or began late enough, else
// the next one (created if needed). f.mu is held.
func (f *FDB) join(sw Switch, s *switchState, since time.Time) *walk {
	if s.running != nil && (!s.running.begun || !s.running.start.Before(since)) {
		return s.running
	}
	if s.running == nil {
		s.running = &walk{done: make(chan struct{})}
		go f.run(sw, s, s.running)
		return s.running
	}
	if s.next == nil {
		s.next = &walk{done: make(chan struct{})}
	}
	return s.next
}

// run performs w, then starts the queued walk, if any.
func (f *FDB) run(sw Switch, s *switchState, w *walk) {
	for w != nil {
		f.mu.Lock()
		wait := s.last.Add(f.gap).Sub(f.now())
		f.mu.Unlock()
		// The questions asked meanwhile join w, which has not begun.
		if !f.pause(wait) || !f.acquire() {
			f.abandon(s, w)
			return
		}
		f.mu.Lock()
		w.begun, w.start = true, f.now()
		s.last = w.start
		f.mu.Unlock()
		// A walk serves every waiter, so no one caller's context bounds it;
		// the walker's own timeouts do.
		t, st, err := f.walker.Walk(context.Background(), sw)
		<-f.sem
		f.obs(sw, st, f.now().Sub(w.start), err)
		f.mu.Lock()
		w.table, w.err = t, err
		s.table, s.err, s.at = t, err, w.start
		close(w.done)
		s.running, s.next, w = s.next, nil, s.next
		f.mu.Unlock()
	}
}

// pause waits d, but no longer than the gap (an injected clock that went
// backwards would otherwise make it wait for ever), and reports false if
// Stop was called meanwhile.
func (f *FDB) pause(d time.Duration) bool {
	select {
	case <-f.stop:
		return false
	default:
	}
	if d = min(d, f.gap); d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-f.stop:
		return false
	}
}

// acquire waits for one of the Concurrency slots, and reports false
// (holding none) if Stop was called first.
func (f *FDB) acquire() bool {
	select {
	case f.sem <- struct{}{}:
	case <-f.stop:
		return false
	}
	select {
	case <-f.stop: // both were ready, and select chose the slot
		<-f.sem
		return false
	default:
		return true
	}
}

// abandon fails w, and the walk queued behind it, with errFDBStopped.
func (f *FDB) abandon(s *switchState, w *walk) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, w := range []*walk{w, s.next} {
		if w != nil {
			w.err = errFDBStopped
			close(w.done)
		}
	}
	s.running, s.next = nil, nil
}

// Refresh walks every switch whose table is older than age (the slow
// periodic refresh); it returns when the walks are done.
func (f *FDB) Refresh(ctx context.Context, switches []Switch, age time.Duration) {
	var wg sync.WaitGroup
	for _, sw := range switches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = f.Table(ctx, sw, f.now().Add(-age))
		}()
	}
	wg.Wait()
}

// Forget drops the tables of switches not in keep (gone from SLS).
func (f *FDB) Forget(keep []Switch) {
	names := map[string]bool{}
	for _, sw := range keep {
		names[sw.Xname] = true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for x, s := range f.states {
		if !names[x] && s.running == nil {
			delete(f.states, x)
		}
	}
}
