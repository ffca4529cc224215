package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/power/pcs"
)

// PCS has no notifications, so bos polls the transitions it started. Each
// has its own schedule: the first check TransitionPoll after it started,
// then at doubling intervals up to transitionPollMax, so a steady flow of
// new transitions never delays the checks of older ones. A transition
// that ends wakes the operators, whose pass reads the power PCS
// confirmed, so a node moves on as soon as its power changed rather than
// at the next poll or SCN.
const transitionPollMax = 15 * time.Second

// The defaults of Config.TransitionGiveUp and TransitionGiveUpChecks: a
// transition PCS has not answered about for 5 checks in a row, over 2
// minutes at least, is given up; one PCS answers 404 for is given up at
// once.
const (
	DefaultTransitionGiveUp       = 2 * time.Minute
	DefaultTransitionGiveUpChecks = 5
)

// opened is a PCS transition bos waits on: what it did, the last_action
// its components were given then and which they are (stamp is "" and ids
// nil for one adopted from PCS's list at start), and its check schedule.
type opened struct {
	op     pcs.Operation
	action string
	stamp  string
	ids    []string

	// next is when it is checked next (zero: not scheduled yet), wait the
	// interval after that check.
	next time.Time
	wait time.Duration
	// errs counts the checks in a row PCS did not answer, since failing.
	errs    int
	failing time.Time
}

// tracker holds the open transitions; added tells the watcher of a new one.
type tracker struct {
	mu    sync.Mutex
	open  map[string]*opened
	added chan struct{}
}

func newTracker() tracker {
	return tracker{open: map[string]*opened{}, added: make(chan struct{}, 1)}
}

func (t *tracker) add(id string, o opened) {
	t.mu.Lock()
	t.open[id] = &o
	t.mu.Unlock()
	select {
	case t.added <- struct{}{}:
	default:
	}
}

// schedule gives the transitions added since the last call their first
// check, at now+first, and returns when the earliest check is due (false:
// none is open).
func (t *tracker) schedule(now time.Time, first time.Duration) (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var next time.Time
	for _, o := range t.open {
		if o.next.IsZero() {
			o.next, o.wait = now.Add(first), first
		}
		if next.IsZero() || o.next.Before(next) {
			next = o.next
		}
	}
	return next, !next.IsZero()
}

// due returns the transitions whose check is due at now (those not yet
// scheduled too), sorted.
func (t *tracker) due(now time.Time) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var ids []string
	for id, o := range t.open {
		if !o.next.After(now) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// checked reschedules a transition that is still open after a check at
// now: answered (failed false) or not; it returns a copy of it.
func (t *tracker) checked(id string, now time.Time, failed bool, first time.Duration) (opened, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	o, ok := t.open[id]
	if !ok {
		return opened{}, false
	}
	switch {
	case !failed:
		o.errs, o.failing = 0, time.Time{}
	case o.errs == 0:
		o.errs, o.failing = 1, now
	default:
		o.errs++
	}
	o.wait = min(2*o.wait, max(transitionPollMax, first))
	o.next = now.Add(o.wait)
	return *o, true
}

func (t *tracker) take(id string) (opened, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	o, ok := t.open[id]
	delete(t.open, id)
	if !ok {
		return opened{}, false
	}
	return *o, true
}

// watchTransitions follows the open PCS transitions until ctx ends, each
// on its own schedule. At start it adopts the transitions PCS still runs
// (a restarted bos started them before it stopped).
//
// Its time is the later of the clock (Config.Now) and the last check time
// a timer (Config.After) fired for: a timer that fires means its time has
// come, even under a test's clock that stands still.
func (s *Service) watchTransitions(ctx context.Context) {
	s.adoptTransitions(ctx)
	var fired time.Time
	for {
		now := later(s.now(), fired)
		next, ok := s.tracked.schedule(now, s.cfg.TransitionPoll)
		var tick <-chan time.Time
		if ok {
			tick = s.cfg.After(max(0, next.Sub(now)))
		}
		select {
		case <-ctx.Done():
			return
		case <-s.tracked.added:
			continue
		case <-tick:
		}
		fired = next
		s.checkTransitions(ctx, later(s.now(), fired))
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func (s *Service) adoptTransitions(ctx context.Context) {
	all, err := s.pcs.Transitions(ctx)
	if err != nil {
		s.log.Warn("pcs_transitions_not_read", "err", err)
		return
	}
	for _, tr := range all {
		if !tr.Done() {
			s.tracked.add(tr.TransitionID, opened{op: tr.Operation, action: actionOf(tr.Operation)})
		}
	}
}

// actionOf is the last_action bos records for a transition's operation.
func actionOf(op pcs.Operation) string {
	switch op {
	case pcs.OpOn:
		return ActionPowerOn
	case pcs.OpSoftOff:
		return ActionPowerOffGraceful
	}
	return ActionPowerOffForceful
}

// checkTransitions reads the open transitions whose check is due at now;
// those that ended are forgotten, their failed tasks noted on the
// components, and the operators woken. One PCS no longer knows (404: it
// expired, or PCS restarted without it) or has not answered about
// Config.TransitionGiveUpChecks times in a row over Config.TransitionGiveUp is given
// up: its components go back to the power operators at once (giveUp).
func (s *Service) checkTransitions(ctx context.Context, now time.Time) {
	ended := false
	for _, id := range s.tracked.due(now) {
		tr, err := s.pcs.Transition(ctx, id)
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, problem.ErrNotFound):
			if o, ok := s.tracked.take(id); ok {
				s.giveUp(ctx, id, o, "PCS no longer knows it (expired, or PCS restarted without it)")
			}
			ended = true
		case err != nil:
			o, ok := s.tracked.checked(id, now, true, s.cfg.TransitionPoll)
			s.log.Debug("pcs_transition_not_read", "transition", id, "errors", o.errs, "err", err)
			if ok && o.errs >= s.cfg.TransitionGiveUpChecks && now.Sub(o.failing) >= s.cfg.TransitionGiveUp {
				s.tracked.take(id)
				s.giveUp(ctx, id, o, fmt.Sprintf("PCS did not answer about it for %s: %v", now.Sub(o.failing), err))
				ended = true
			}
		case tr.Done():
			s.log.Debug("pcs_transition_ended", "transition", id, "operation", tr.Operation)
			if o, ok := s.tracked.take(id); ok {
				s.noteTasks(ctx, o, tr.Tasks)
			}
			ended = true
		default:
			s.tracked.checked(id, now, false, s.cfg.TransitionPoll)
		}
	}
	if ended {
		s.Wake()
	}
}

// giveUp hands the components still waiting on a transition bos gave up
// on back to the power operators: their error names the transition and
// why, and their action's wait ends now (overdue), so the next pass calls
// again or, past their retry_policy, fails them with that error.
func (s *Service) giveUp(ctx context.Context, id string, o opened, why string) {
	s.log.Warn("pcs_transition_given_up", "transition", id, "operation", o.op, "components", len(o.ids), "why", why)
	if o.stamp == "" || len(o.ids) == 0 {
		return
	}
	msg := fmt.Sprintf("PCS %s transition %s given up: %s", o.op, id, why)
	mark := LastAction{Action: o.action, LastUpdated: o.stamp}
	ids := slices.Sorted(slices.Values(o.ids))
	var marked []string
	err := s.update(ctx, ids, waitingOn(o), func(c *Component) bool {
		c.LastAction.Failed, c.Error = true, msg
		marked = append(marked, c.ID)
		return true
	})
	if err != nil {
		// No wait ends early for an error that was not stored: the
		// components stay as they were, and time out as usual.
		s.log.Warn("component_error_not_stored", "err", err)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range marked {
		s.overdue[id] = mark
	}
}

// waitingOn allows the components that still wait on the transition: their
// last action is the one it recorded.
func waitingOn(o opened) *guard {
	return &guard{still: func(c *Component) bool {
		return c.Enabled && c.Status.StatusOverride == "" && c.LastAction.Action == o.action && c.LastAction.LastUpdated == o.stamp
	}}
}

// noteTasks records the error of each failed task on its component, if the
// component still waits on this transition (its last action is the one the
// transition recorded). The component stays where it is: the power
// operator calls again when the action's wait ends, and a node that fails
// past its retries names this error.
func (s *Service) noteTasks(ctx context.Context, o opened, tasks []pcs.Task) {
	if o.stamp == "" {
		return
	}
	msgs := map[string]string{}
	var ids []string
	for _, t := range tasks {
		if t.Status != pcs.TaskFailed && t.Status != pcs.TaskUnsupported {
			continue
		}
		why := t.Error
		if why == "" {
			why = t.Description
		}
		msgs[t.Xname] = fmt.Sprintf("PCS %s: %s", o.op, why)
		ids = append(ids, t.Xname)
	}
	if len(ids) == 0 {
		return
	}
	slices.Sort(ids)
	err := s.update(ctx, ids, waitingOn(o), func(c *Component) bool {
		c.LastAction.Failed, c.Error = true, msgs[c.ID]
		return true
	})
	if err != nil {
		s.log.Warn("component_error_not_stored", "err", err)
	}
}
