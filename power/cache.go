package power

import (
	"context"
	"net/url"
	"sort"
	"sync"
	"time"

	"github.com/hmsuite/hms/power/pcs"
)

// entry is one component's cached power status.
type entry struct {
	power, mgmt string
	err         string
	supported   []string
	updated     string // RFC 3339 with nanoseconds, formatted once
}

// stamp is how lastUpdated is written (Go's time.Time JSON form, as PCS).
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// statusCache is the power-status cache /power-status answers from: filled
// by sampling every component, and by every read a task makes.
type statusCache struct {
	mu     sync.RWMutex
	m      map[string]*entry
	sorted []string // keys of m in order; nil when a key was added since
}

func newStatusCache() *statusCache { return &statusCache{m: map[string]*entry{}} }

// observe records a power state read from the BMC; supported, if not nil,
// replaces the supported transitions.
func (c *statusCache) observe(x, power string, supported []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[x]
	if e == nil {
		e = &entry{}
		c.m[x] = e
		c.sorted = nil
	}
	e.power, e.mgmt, e.err, e.updated = power, pcs.MgmtAvailable, "", stamp(time.Now())
	if supported != nil {
		e.supported = supported
	}
}

// fail records that the BMC could not be read.
func (c *statusCache) fail(x, msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[x]
	if e == nil {
		e = &entry{supported: []string{}}
		c.m[x] = e
		c.sorted = nil
	}
	e.power, e.mgmt, e.err, e.updated = pcs.PowerUndefined, pcs.MgmtUnavailable, msg, stamp(time.Now())
}

func (c *statusCache) get(x string) (entry, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok := c.m[x]
	if !ok {
		return entry{}, false
	}
	return *e, true
}

func (c *statusCache) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}

// each calls fn for every entry in xname order, under the read lock.
func (c *statusCache) each(fn func(x string, e *entry)) {
	c.mu.RLock()
	keys := c.sorted
	c.mu.RUnlock()
	if keys == nil {
		c.mu.Lock()
		if c.sorted == nil {
			c.sorted = make([]string, 0, len(c.m))
			for k := range c.m {
				c.sorted = append(c.sorted, k)
			}
			sort.Strings(c.sorted)
		}
		keys = c.sorted
		c.mu.Unlock()
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, k := range keys {
		fn(k, c.m[k])
	}
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
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(s.cfg.SampleInterval):
		}
	}
}

// Sample reads the power state of every node HSM knows and every
// component with a Redfish endpoint, then reports changes to HSM.
func (s *Service) Sample(ctx context.Context) error {
	start := time.Now()
	if err := s.targets.refresh(ctx); err != nil {
		return err
	}
	nodes, err := s.hsm.Components(ctx, url.Values{"type": {"Node"}})
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
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Minute):
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
