package power

import (
	"context"
	"net/url"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hmsuite/hms/internal/pause"
	"github.com/hmsuite/hms/power/pcs"
)

// entry is one component's cached power status. Entries are never changed
// once in the cache (a new reading replaces the entry), so an answer can
// encode them after the lock is released.
type entry struct {
	power, mgmt string
	err         string
	supported   []string
	updated     string // RFC 3339 with nanoseconds, formatted once
}

// stamp is how lastUpdated is written (Go's time.Time JSON form, as PCS).
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// statusCache is the power-status cache /power-status answers from: filled
// by sampling every component, and by every read a task makes. A reading
// replaces the entry in the component's slot atomically, so an answer
// walks the slots without the lock and without copying them; the lock
// guards the map and the sorted list of slots.
type statusCache struct {
	mu sync.RWMutex
	m  map[string]*slot
	// sorted holds every slot in xname order; nil when a component was
	// added since (the next snapshot builds a new list). A list once
	// built is never changed, so snapshots may be read without the lock.
	sorted []*slot
}

// slot is one component of the cache and its current entry.
type slot struct {
	x string
	e atomic.Pointer[entry]
}

func newStatusCache() *statusCache { return &statusCache{m: map[string]*slot{}} }

// put makes e the entry of x; keep, if set, derives it from the previous
// one (nil for a new component). It holds the write lock.
func (c *statusCache) put(x string, e *entry, keep func(old, e *entry)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.m[x]
	if s == nil {
		s = &slot{x: x}
		c.m[x] = s
		c.sorted = nil
	}
	if keep != nil {
		keep(s.e.Load(), e)
	}
	s.e.Store(e)
}

// observe records a power state read from the BMC; supported, if not nil,
// replaces the supported transitions.
func (c *statusCache) observe(x, power string, supported []string) {
	e := &entry{power: power, mgmt: pcs.MgmtAvailable, updated: stamp(time.Now()), supported: supported}
	var keep func(old, e *entry)
	if supported == nil {
		keep = keepSupported
	}
	c.put(x, e, keep)
}

// fail records that the BMC could not be read.
func (c *statusCache) fail(x, msg string) {
	e := &entry{power: pcs.PowerUndefined, mgmt: pcs.MgmtUnavailable, err: msg, updated: stamp(time.Now()), supported: []string{}}
	c.put(x, e, keepSupported)
}

// keepSupported carries the supported transitions of the previous entry over.
func keepSupported(old, e *entry) {
	if old != nil {
		e.supported = old.supported
	}
}

func (c *statusCache) get(x string) (*entry, bool) {
	c.mu.RLock()
	s := c.m[x]
	c.mu.RUnlock()
	if s == nil {
		return nil, false
	}
	return s.e.Load(), true
}

func (c *statusCache) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}

// snapshot returns every slot in xname order; the caller must not change
// the list.
func (c *statusCache) snapshot() []*slot {
	c.mu.RLock()
	sorted := c.sorted
	c.mu.RUnlock()
	if sorted != nil {
		return sorted
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sorted == nil {
		c.sorted = make([]*slot, 0, len(c.m))
		for _, s := range c.m {
			c.sorted = append(c.sorted, s)
		}
		sort.Slice(c.sorted, func(i, j int) bool { return c.sorted[i].x < c.sorted[j].x })
	}
	return c.sorted
}

// sampleWorkers bounds the components read at once by a sampling round
// (the BMC client bounds requests per BMC and overall as well).
const sampleWorkers = 1000

// sampleLoop refreshes the cache every SampleInterval, starting at once.
func (s *Service) sampleLoop(ctx context.Context) error {
	for {
		if err := s.Sample(ctx); err != nil && ctx.Err() == nil {
			s.log.WarnContext(ctx, "power_sample_failed", "err", err)
		}
		if !pause.For(ctx, s.cfg.SampleInterval) {
			return nil
		}
	}
}

// Sample reads the power state of every component HSM knows of a type
// pcs controls and of every component with a Redfish endpoint, then
// reports changes to HSM. One pcs cannot reach (a switch, a PDU outlet or a
// slot without a Redfish endpoint in HSM) is cached undefined/unavailable
// with the reason, rather than left out.
func (s *Service) Sample(ctx context.Context) error {
	start := time.Now()
	if err := s.targets.refresh(ctx); err != nil {
		return err
	}
	nodes, err := s.hsm.Components(ctx, url.Values{"type": powerable})
	if err != nil {
		return err
	}
	set := map[string]bool{}
	for _, n := range nodes {
		set[n.ID] = true
	}
	s.targets.mu.Lock()
	for x := range s.targets.byXname {
		set[x] = true
	}
	s.targets.mu.Unlock()
	work := make(chan string)
	var wg sync.WaitGroup
	for range min(sampleWorkers, len(set)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for x := range work {
				s.sampleOne(ctx, x)
			}
		}()
	}
	ids := make([]string, 0, len(set))
	for x := range set {
		ids = append(ids, x)
	}
	for _, x := range ids {
		select {
		case work <- x:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	s.m.sampleTime.Observe(time.Since(start).Seconds())
	s.m.lastSample.Store(s.cfg.Now().UnixNano())
	s.pushStates(ctx, ids)
	return nil
}

func (s *Service) sampleOne(ctx context.Context, x string) {
	if ctx.Err() != nil {
		return
	}
	t, err := s.targets.lookup(ctx, x)
	if err != nil {
		s.cache.fail(x, err.Error())
		return
	}
	res, err := s.bmc.read(ctx, t)
	if err != nil {
		if ctx.Err() == nil {
			s.cache.fail(x, err.Error())
		}
		return
	}
	s.cache.observe(x, powerOf(res.PowerState), supportedTransitions(s.targets.allowed(ctx, t, res.reset())))
}

// expireLoop drops finished transitions past their expiry, and the oldest
// finished ones beyond MaxKept, every minute.
func (s *Service) expireLoop(ctx context.Context) error {
	for {
		if err := s.Expire(ctx); err != nil && ctx.Err() == nil {
			s.log.WarnContext(ctx, "transition_expiry_failed", "err", err)
		}
		if !pause.For(ctx, time.Minute) {
			return nil
		}
	}
}

// Expire removes the finished transitions that are too old or too many.
func (s *Service) Expire(ctx context.Context) error {
	now := time.Now()
	var finished []TransitionSummary
	for _, t := range s.List() {
		if t.Status == pcs.TransitionCompleted || t.Status == pcs.TransitionAborted {
			finished = append(finished, t)
		}
	}
	var drop []string
	for i, t := range finished {
		if now.After(t.Expires) || len(finished)-i > s.cfg.MaxKept {
			drop = append(drop, t.ID)
		}
	}
	if err := s.expireCaps(ctx, now); err != nil {
		return err
	}
	if len(drop) == 0 {
		return nil
	}
	if err := s.store.Delete(ctx, drop); err != nil {
		return err
	}
	s.mu.Lock()
	for _, id := range drop {
		delete(s.runs, id)
	}
	s.mu.Unlock()
	return nil
}
