package discovery

import (
	"context"
	"time"
)

// Removal of a BMC that is gone and no longer in SLS. The decision is
// stored (state removing) before HSM is told, so HSM being down (or reds
// stopping) does not lose it: a removal HSM did not take is retried with
// backoff (RetryMin doubling up to RetryMax) until HSM answers, and after a
// restart from the stored state at once.

// removalRetry is the backoff of one removal HSM did not take; inflight
// marks a removal HSM is being told of now.
type removalRetry struct {
	attempts int
	next     time.Time
	inflight bool
}

// startRemoval records that e is to be retired and tries once now.
func (s *Service) startRemoval(ctx context.Context, e Endpoint) {
	if err := s.cfg.Store.SetState(ctx, e.Xname, StateRemoving); err != nil {
		s.pollFailed(ctx, "store", err)
		return
	}
	s.forgetMAC(e.MAC)
	s.tryRemoval(ctx, e)
}

// tryRemoval retires e in HSM; on failure it schedules the next attempt.
// The attempt is decided under s.removeMu, HSM is told outside it (a slow
// HSM holds up this removal alone, not the others nor the presence round
// that starts them), and the outcome is recorded under it again. A BMC
// registered anew since the removal was decided (its stored state no
// longer removing), before HSM is told or while, is left alone.
func (s *Service) tryRemoval(ctx context.Context, e Endpoint) {
	if !s.claimRemoval(ctx, e.Xname) {
		return
	}
	err := retire(ctx, s.cfg.HSM, e.Xname)
	yielded, serr := s.endRemoval(ctx, e.Xname, err)
	if s.cfg.Retired != nil {
		s.cfg.Retired(e.Xname, err)
	}
	switch {
	case err != nil:
		s.pollFailed(ctx, "hsm", err)
		return
	case yielded:
		s.log.Warn("bmc_registered_during_removal", "xname", e.Xname, "mac", e.MAC)
		return
	case serr != nil:
		s.pollFailed(ctx, "store", serr)
	}
	s.m.removed.Inc()
	s.log.Info("bmc_removed", "xname", e.Xname, "mac", e.MAC)
}

// claimRemoval reports whether HSM is to be told of the removal of xname
// now, and marks it in flight if so: not when an attempt is under way
// already or its backoff has not passed, nor when the BMC was registered
// anew (its removal is dropped). The backoff is checked here, with the
// claim, and not only in dueRemovals: a round's list of due removals is
// stale by the time it reaches each one, and another caller (the
// presence round, a second retry round) may have tried and failed it
// meanwhile; trying it again at once would double its backoff for
// nothing and put off its retirement by a step.
func (s *Service) claimRemoval(ctx context.Context, xname string) bool {
	s.removeMu.Lock()
	defer s.removeMu.Unlock()
	r := s.removals[xname]
	if r != nil && (r.inflight || s.cfg.Now().Before(r.next)) {
		return false
	}
	if cur, err := s.cfg.Store.Get(ctx, xname); err == nil && cur.State != StateRemoving {
		delete(s.removals, xname)
		return false
	}
	if r == nil {
		r = &removalRetry{}
		s.removals[xname] = r
	}
	r.inflight = true
	return true
}

// endRemoval records the outcome of telling HSM of the removal of xname:
// on failure the next attempt is scheduled; on success the BMC is stored
// removed unless it was registered anew meanwhile (yielded).
func (s *Service) endRemoval(ctx context.Context, xname string, err error) (yielded bool, serr error) {
	s.removeMu.Lock()
	defer s.removeMu.Unlock()
	r := s.removals[xname]
	if r == nil { // dropped meanwhile (retryRemovals: no longer removing)
		r = &removalRetry{}
	}
	r.inflight = false
	if err != nil {
		if ctx.Err() == nil {
			r.attempts++
			r.next = s.cfg.Now().Add(min(s.cfg.RetryMin<<min(r.attempts-1, 16), s.cfg.RetryMax))
		}
		s.removals[xname] = r
		return false, nil
	}
	delete(s.removals, xname)
	ok, serr := s.cfg.Store.SetStateFrom(ctx, xname, StateRemoving, StateRemoved)
	return serr == nil && !ok, serr
}

// retryRemovals retries the stored removals whose backoff has passed (all
// of them after a restart).
func (s *Service) retryRemovals(ctx context.Context) {
	eps, err := s.cfg.Store.List(ctx, StateRemoving)
	if err != nil {
		s.pollFailed(ctx, "store", err)
		return
	}
	for _, e := range s.dueRemovals(eps) {
		s.tryRemoval(ctx, e)
	}
}

// dueRemovals returns the removals of eps (those stored) whose backoff has
// passed and that are not in flight, and drops the backoff of those no
// longer stored as removing (registered anew meanwhile).
func (s *Service) dueRemovals(eps []Endpoint) []Endpoint {
	s.removeMu.Lock()
	defer s.removeMu.Unlock()
	now := s.cfg.Now()
	live := make(map[string]bool, len(eps))
	var due []Endpoint
	for _, e := range eps {
		live[e.Xname] = true
		if r := s.removals[e.Xname]; r != nil && (r.inflight || now.Before(r.next)) {
			continue
		}
		due = append(due, e)
	}
	for x, r := range s.removals {
		if !live[x] && !r.inflight {
			delete(s.removals, x)
		}
	}
	return due
}

// RetryRemovals runs the retries of removals that are due now (tests; Run
// does it every RetryMin).
func (s *Service) RetryRemovals(ctx context.Context) { s.retryRemovals(ctx) }

// forgetMAC drops the retry mac waits for (its BMC is being removed); a
// MAC queued or being processed is left alone.
func (s *Service) forgetMAC(mac string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.done, mac) // a lease for it later is a BMC to place anew
	if s.unknown[mac] == nil || s.running[mac] {
		return
	}
	delete(s.unknown, mac)
	delete(s.jobs, mac)
	delete(s.logged, mac)
}
