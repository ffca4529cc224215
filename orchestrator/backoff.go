package orchestrator

import (
	"sync"
	"time"
)

// Session setup backoff: the first retry after setupBackoffBase, doubling
// up to setupBackoffMax, so a pending session catches a peer that comes
// back within seconds and does not hammer one that stays down.
const (
	setupBackoffBase = 2 * time.Second
	setupBackoffMax  = 2 * time.Minute
)

// backoff is when each pending session's setup may be tried again. It
// lives in memory: a restarted bos tries every pending session at once.
type backoff struct {
	mu    sync.Mutex
	tries map[string]retry
}

type retry struct {
	attempts int
	at       time.Time
}

// due reports whether name's setup may run at now.
func (b *backoff) due(name string, now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	r, ok := b.tries[name]
	return !ok || !now.Before(r.at)
}

// failed records a failed attempt and returns the attempts so far and the
// wait before the next one.
func (b *backoff) failed(name string, now time.Time) (int, time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tries == nil {
		b.tries = map[string]retry{}
	}
	r := b.tries[name]
	r.attempts++
	wait := setupBackoffMax
	if r.attempts <= 16 {
		wait = min(setupBackoffBase<<(r.attempts-1), setupBackoffMax)
	}
	r.at = now.Add(wait)
	b.tries[name] = r
	return r.attempts, wait
}

// forget drops name's record (set up, ended or gone).
func (b *backoff) forget(name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.tries, name)
}

// next is the earliest retry time, if any session waits for one.
func (b *backoff) next() (time.Time, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var first time.Time
	for _, r := range b.tries {
		if first.IsZero() || r.at.Before(first) {
			first = r.at
		}
	}
	return first, !first.IsZero()
}
