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

// PCS has no notifications, so bos polls the transitions it started: one
// goroutine checks every open one, the first time TransitionPoll after the
// last one started, then at doubling intervals up to transitionPollMax. A
// transition that ends wakes the operators, whose pass reads the power PCS
// confirmed, so a node moves on as soon as its power changed rather than at
// the next poll or SCN.
const transitionPollMax = 15 * time.Second

// opened is a PCS transition bos waits on: what it did, and the
// last_action its components were given then (stamp is "" for one adopted
// from PCS's list at start).
type opened struct {
	op     pcs.Operation
	action string
	stamp  string
}

// tracker holds the open transitions; added tells the watcher of a new one.
type tracker struct {
	mu    sync.Mutex
	open  map[string]opened
	added chan struct{}
}

func newTracker() tracker {
	return tracker{open: map[string]opened{}, added: make(chan struct{}, 1)}
}

func (t *tracker) add(id string, o opened) {
	t.mu.Lock()
	t.open[id] = o
	t.mu.Unlock()
	select {
	case t.added <- struct{}{}:
	default:
	}
}

func (t *tracker) ids() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	ids := make([]string, 0, len(t.open))
	for id := range t.open {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (t *tracker) take(id string) (opened, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	o, ok := t.open[id]
	delete(t.open, id)
	return o, ok
}

// watchTransitions follows the open PCS transitions until ctx ends. At
// start it adopts the transitions PCS still runs (a restarted bos
// started them before it stopped).
func (s *Service) watchTransitions(ctx context.Context) {
	s.adoptTransitions(ctx)
	wait := s.cfg.TransitionPoll
	for {
		var tick <-chan time.Time
		if len(s.tracked.ids()) > 0 {
			tick = s.cfg.After(wait)
		}
		select {
		case <-ctx.Done():
			return
		case <-s.tracked.added:
			wait = s.cfg.TransitionPoll
			continue
		case <-tick:
		}
		s.checkTransitions(ctx)
		wait = min(2*wait, max(transitionPollMax, s.cfg.TransitionPoll))
	}
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

// checkTransitions reads every open transition once; those that ended are
// forgotten, their failed tasks noted on the components, and the operators
// woken. One PCS no longer knows (restarted without it, or expired) counts
// as ended.
func (s *Service) checkTransitions(ctx context.Context) {
	ended := false
	for _, id := range s.tracked.ids() {
		tr, err := s.pcs.Transition(ctx, id)
		switch {
		case errors.Is(err, problem.ErrNotFound):
			s.tracked.take(id)
			ended = true
		case err != nil:
			if ctx.Err() == nil {
				s.log.Debug("pcs_transition_not_read", "transition", id, "err", err)
			}
		case tr.Done():
			if o, ok := s.tracked.take(id); ok {
				s.noteTasks(ctx, o, tr.Tasks)
			}
			ended = true
		}
	}
	if ended {
		s.Wake()
	}
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
	g := &guard{still: func(c *Component) bool {
		return c.Enabled && c.Status.StatusOverride == "" && c.LastAction.Action == o.action && c.LastAction.LastUpdated == o.stamp
	}}
	slices.Sort(ids)
	err := s.update(ctx, ids, g, func(c *Component) bool {
		c.LastAction.Failed, c.Error = true, msgs[c.ID]
		return true
	})
	if err != nil {
		s.log.Warn("component_error_not_stored", "err", err)
	}
}
