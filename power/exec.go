package power

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/hmsuite/hms/power/pcs"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// flushEvery is how often task progress is written to SQLite.
const flushEvery = 500 * time.Millisecond

// maxReservation is the longest service reservation HSM grants (minutes);
// longer tasks renew it.
const maxReservation = 15

// runTransition carries a transition out: reserve, run every unfinished
// task (each one's power state reported to HSM as it succeeds, see
// reporter), release, make sure HSM was told of them all. If ctx ends (the daemon
// stops) it returns with the transition unfinished and stored as it
// stands, for the next start to resume.
func (s *Service) runTransition(ctx context.Context, r *run) {
	r.mu.Lock()
	if r.tr.Status == pcs.TransitionNew {
		r.tr.Status = pcs.TransitionInProgress
	}
	r.mu.Unlock()
	id := r.tr.ID
	stopFlush := s.flusher(ctx, r)
	defer stopFlush()
	if err := s.targets.refresh(ctx); err != nil {
		s.log.WarnContext(ctx, "hsm_endpoints_unavailable", "transition_id", id, "err", err)
	}
	tasks := r.pending()
	// Resumed: the tasks that succeeded before the restart may not have
	// been reported.
	s.reports.add(r.succeeded()...)
	tasks = s.reserve(ctx, r, tasks)
	stopRenew := s.renewer(ctx, r)
	deadline := s.cfg.Now().Add(time.Duration(r.tr.Deadline) * s.cfg.Minute)
	taskCtx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-r.abort:
			cancel()
		case <-taskCtx.Done():
		}
	}()
	ord := newOrder(r)
	var wg sync.WaitGroup
	for _, t := range tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			(&taskRun{s: s, r: r, t: t, deadline: deadline, ord: ord}).execute(taskCtx)
		}()
	}
	wg.Wait()
	cancel()
	stopRenew()
	if ctx.Err() != nil {
		return // stopping: the tasks stay as stored, resumed on the next start
	}
	s.release(ctx, r)
	s.reportToHSM(ctx, r)
	r.mu.Lock()
	r.tr.Status = pcs.TransitionCompleted
	if r.aborting() {
		r.tr.Status = pcs.TransitionAborted
	}
	status := r.tr.Status
	r.mu.Unlock()
	stopFlush()
	// Counted before done closes, so a waiter (CAPMC, tests) sees it.
	s.m.transitions.WithLabelValues(string(r.tr.Operation), status).Inc()
	close(r.done)
	s.log.InfoContext(ctx, "transition_finished", "transition_id", id, "status", status)
	s.emit(Event{Kind: EventTransitionDone, ID: id, Status: status})
}

// flusher writes the changed tasks every flushEvery; the returned func
// stops it after a last write (idempotent).
func (s *Service) flusher(ctx context.Context, r *run) func() {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(flushEvery)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				s.flush(ctx, r)
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(stop); wg.Wait() })
		s.flush(context.WithoutCancel(ctx), r)
	}
}

func (s *Service) flush(ctx context.Context, r *run) {
	status, tasks := r.takeDirty()
	if err := s.store.Save(ctx, r.tr.ID, status, tasks); err != nil {
		s.log.ErrorContext(ctx, "transition_save_failed", "transition_id", r.tr.ID, "err", err)
		r.mu.Lock()
		for i := range r.tr.Tasks {
			r.dirty[r.tr.Tasks[i]] = struct{}{}
		}
		r.mu.Unlock()
	}
}

// reserve makes sure every task's component is reserved for pcs, or
// covered by the caller's valid deputy key; the others fail, never
// powered. It returns the tasks that may go on.
func (s *Service) reserve(ctx context.Context, r *run, tasks []*Task) []*Task {
	var keyed []hsm.KeyedID
	for _, t := range tasks {
		if t.DeputyKey != "" && t.ResvKey == "" {
			keyed = append(keyed, hsm.KeyedID{ID: t.Xname, Key: t.DeputyKey})
		}
	}
	deputyOK := map[string]bool{}
	if len(keyed) > 0 {
		res, err := s.hsm.CheckDeputyKeys(ctx, keyed)
		if err == nil {
			for _, ok := range res.Success {
				deputyOK[ok.ID] = true
			}
		}
	}
	// Ours from before a restart: renew them; reserve what could not be.
	var renew []hsm.KeyedID
	for _, t := range tasks {
		if t.ResvKey != "" {
			renew = append(renew, hsm.KeyedID{ID: t.Xname, Key: t.ResvKey})
		}
	}
	lost := map[string]bool{}
	if len(renew) > 0 {
		failures, err := s.hsm.RenewService(ctx, renew, s.reservationMinutes(r))
		for _, f := range failures {
			lost[f.ID] = true
		}
		if err != nil {
			for _, k := range renew {
				lost[k.ID] = true
			}
		}
	}
	var ids []string
	for _, t := range tasks {
		if !deputyOK[t.Xname] && (t.ResvKey == "" || lost[t.Xname]) {
			ids = append(ids, t.Xname)
		}
	}
	if len(ids) == 0 {
		return tasks
	}
	res, err := s.hsm.ReserveService(ctx, ids, s.reservationMinutes(r))
	if err != nil {
		for _, t := range tasks {
			if slices.Contains(ids, t.Xname) {
				r.finish(t, failed("Error acquiring reservations", "ERROR aquiring needed reservations: "+err.Error()))
			}
		}
		return r.pending()
	}
	got := map[string]string{}
	for _, k := range res.Success {
		got[k.ID] = k.ReservationKey
	}
	reason := map[string]string{}
	for _, f := range res.Failure {
		reason[f.ID] = f.Reason
	}
	for _, t := range tasks {
		if key, ok := got[t.Xname]; ok {
			r.setResvKey(t, key)
		} else if slices.Contains(ids, t.Xname) {
			msg := "Unable to reserve component"
			if t.DeputyKey != "" {
				msg = "Invalid deputy key and unable to reserve component"
			}
			if why := reason[t.Xname]; why != "" {
				msg += " (" + why + ")"
			}
			r.finish(t, failed("Failed to achieve transition", msg))
		}
	}
	return r.pending()
}

// reservationMinutes is the deadline plus a minute, at most what HSM grants.
func (s *Service) reservationMinutes(r *run) int {
	return min(r.tr.Deadline+1, maxReservation)
}

// renewer renews pcs's reservations of the transition while its tasks run.
func (s *Service) renewer(ctx context.Context, r *run) func() {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		every := time.Duration(maxReservation) * s.cfg.Minute / 3
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				if keys := s.heldKeys(r, false); len(keys) > 0 {
					if _, err := s.hsm.RenewService(ctx, keys, maxReservation); err != nil {
						s.log.WarnContext(ctx, "reservation_renew_failed", "transition_id", r.tr.ID, "err", err)
					}
				}
			}
		}
	}()
	return func() { close(stop); <-done }
}

// heldKeys lists pcs's reservation keys of the transition (all, or only
// those of finished tasks).
func (s *Service) heldKeys(r *run, all bool) []hsm.KeyedID {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []hsm.KeyedID
	for _, t := range r.tr.Tasks {
		if t.ResvKey != "" && (all || !t.final()) {
			out = append(out, hsm.KeyedID{ID: t.Xname, Key: t.ResvKey})
		}
	}
	return out
}

// release gives back pcs's reservations once the transition is done.
func (s *Service) release(ctx context.Context, r *run) {
	keys := s.heldKeys(r, true)
	if len(keys) == 0 {
		return
	}
	if err := s.hsm.ReleaseService(ctx, keys); err != nil {
		s.log.WarnContext(ctx, "reservation_release_failed", "transition_id", r.tr.ID, "err", err)
		return
	}
	r.mu.Lock()
	for _, t := range r.tr.Tasks {
		if t.ResvKey != "" {
			t.ResvKey = ""
			r.dirty[t] = struct{}{}
		}
	}
	r.mu.Unlock()
}

// reportToHSM reports the transition's succeeded tasks that the reporter
// has not reported yet, so that HSM has been told of every one by the time
// the transition is seen to end.
func (s *Service) reportToHSM(ctx context.Context, r *run) {
	s.reports.flush(ctx, r.succeeded())
}

// pushStates reports the cached power state of ids to HSM: those read Off
// are set Off, those read On are set On unless HSM already has them On or
// Ready (a Ready node that heartbeats is never demoted). HSM sends the
// SCNs.
func (s *Service) pushStates(ctx context.Context, ids []string) {
	if len(ids) == 0 {
		return
	}
	comps, err := s.hsm.QueryComponents(ctx, ids)
	if err != nil {
		s.log.WarnContext(ctx, "hsm_state_update_failed", "err", err)
		return
	}
	var on, off []string
	for _, c := range comps {
		e, ok := s.cache.get(c.ID)
		switch {
		case !ok:
		case e.power == pcs.PowerOff && c.State != hsm.StateOff:
			off = append(off, c.ID)
		case e.power == pcs.PowerOn && (c.State == hsm.StateOff || c.State == hsm.StateUnknown):
			on = append(on, c.ID)
		}
	}
	for _, u := range []struct {
		ids   []string
		state string
	}{{off, hsm.StateOff}, {on, hsm.StateOn}} {
		if len(u.ids) == 0 {
			continue
		}
		if err := s.hsm.BulkStateData(ctx, u.ids, u.state, "", false, &hsm.ExtendedInfo{Message: "pcs: power state read from the BMC"}); err != nil {
			s.log.WarnContext(ctx, "hsm_state_update_failed", "state", u.state, "count", len(u.ids), "err", err)
			continue
		}
		s.emit(Event{Kind: EventReported, Status: u.state, Xnames: u.ids})
	}
}
