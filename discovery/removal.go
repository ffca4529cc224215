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

// removalRetry is the backoff of one removal HSM did not take.
type removalRetry struct {
	attempts int
	next     time.Time
}

// startRemoval records that e is to be retired and tries once now.
func (s *Service) startRemoval(ctx context.Context, e Endpoint) {
	if err := s.cfg.Store.SetState(ctx, e.Xname, StateRemoving); err != nil {
		s.pollFailed(ctx, "store", err)
		return
	}
	s.forgetMAC(e.MAC)
	s.removeMu.Lock()
	defer s.removeMu.Unlock()
	s.tryRemoval(ctx, e)
}

// tryRemoval retires e in HSM; on failure it schedules the next attempt.
// A BMC registered anew since the removal was decided (its stored state no
// longer removing) is left alone. s.removeMu is held.
func (s *Service) tryRemoval(ctx context.Context, e Endpoint) {
	if cur, err := s.cfg.Store.Get(ctx, e.Xname); err == nil && cur.State != StateRemoving {
		delete(s.removals, e.Xname)
		return
	}
	if err := retire(ctx, s.cfg.HSM, e.Xname); err != nil {
		if ctx.Err() != nil {
			return
		}
		r := s.removals[e.Xname]
		if r == nil {
			r = &removalRetry{}
			s.removals[e.Xname] = r
		}
		r.attempts++
		r.next = s.cfg.Now().Add(min(s.cfg.RetryMin<<min(r.attempts-1, 16), s.cfg.RetryMax))
		s.pollFailed(ctx, "hsm", err)
		return
	}
	delete(s.removals, e.Xname)
	if ok, err := s.cfg.Store.SetStateFrom(ctx, e.Xname, StateRemoving, StateRemoved); err != nil {
		s.pollFailed(ctx, "store", err)
	} else if !ok {
		s.log.Warn("bmc_registered_during_removal", "xname", e.Xname, "mac", e.MAC)
		return
	}
	s.m.removed.Inc()
	s.log.Info("bmc_removed", "xname", e.Xname, "mac", e.MAC)
}

// retryRemovals retries the stored removals whose backoff has passed (all
// of them after a restart).
func (s *Service) retryRemovals(ctx context.Context) {
	eps, err := s.cfg.Store.List(ctx, StateRemoving)
	if err != nil {
		s.pollFailed(ctx, "store", err)
		return
	}
	s.removeMu.Lock()
	defer s.removeMu.Unlock()
	now := s.cfg.Now()
	live := make(map[string]bool, len(eps))
	for _, e := range eps {
		live[e.Xname] = true
		if r := s.removals[e.Xname]; r != nil && now.Before(r.next) {
			continue
		}
		s.tryRemoval(ctx, e)
	}
	for x := range s.removals {
		if !live[x] { // registered anew meanwhile
			delete(s.removals, x)
		}
	}
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
