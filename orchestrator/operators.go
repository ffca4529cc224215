package orchestrator

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hmsuite/hms/internal/problem"
)

// Run runs operator passes until ctx ends: one every polling_frequency
// (every Config.FallbackPoll once HSM sends SCNs) or when a component's
// wait ends, and one at once when something asks (Wake: a new session,
// applystaged, an options change, an SCN about a component bos moves, a
// PCS transition bos started ending). One goroutine does every operator's
// work in turn, as one process rather than BOS's pod per operator; another
// follows the PCS transitions (watchTransitions).
func (s *Service) Run(ctx context.Context) error {
	watched := make(chan struct{})
	go func() { defer close(watched); s.watchTransitions(ctx) }()
	defer func() { <-watched }()
	if s.cmd != nil {
		defer s.cmd.wait()
	}
	for {
		if err := s.Reconcile(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("operator_pass_failed", "err", err)
		}
		t := time.NewTimer(s.nextPass())
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-s.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// Reconcile is one pass of every operator: discovery, session setup, the
// status operator (observe), the power operators, session completion and
// cleanup. Tests call it directly, with their own clock.
func (s *Service) Reconcile(ctx context.Context) error {
	var errs []error
	// The time of each step, logged at debug: where a pass over thousands
	// of components spends its time (docs/benchmarks/bos.md).
	took := make([]any, 0, 10)
	defer func() { s.log.Debug("operator_pass", took...) }()
	for i, step := range []func(context.Context) error{s.discover, s.setupSessions, s.observe, s.act,
		s.completeSessions} {
		start := time.Now()
		err := step(ctx)
		took = append(took, passSteps[i], time.Since(start).Round(time.Millisecond))
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// passSteps name Reconcile's steps in its debug log.
var passSteps = []string{"discover", "setup", "observe", "act", "complete"}

// discover makes every HSM node a BOS component (disabled,
// newly_discovered), every discovery_frequency.
func (s *Service) discover(ctx context.Context) error {
	every := s.options().Discovery
	now := s.now()
	s.mu.Lock()
	due := every > 0 && now.Sub(s.lastDiscovery) >= every
	if due {
		s.lastDiscovery = now
	}
	s.mu.Unlock()
	if !due {
		return nil
	}
	nodes, err := s.hsm.Components(ctx, url.Values{"type": {"Node"}})
	if err != nil {
		return err
	}
	var fresh []string
	s.mu.Lock()
	for _, n := range nodes {
		if _, ok := s.comps[n.ID]; !ok {
			fresh = append(fresh, n.ID)
		}
	}
	s.mu.Unlock()
	st := stamp(now)
	// An empty guard: a component created meanwhile (PUT) is left alone.
	return s.write(ctx, fresh, true, &guard{}, func(c *Component) bool {
		c.LastAction = LastAction{Action: ActionDiscovered, LastUpdated: st}
		return true
	})
}

// setupSessions starts the pending sessions: their nodes get the desired
// (or, staged, the staged) state and are handed to the session. A session
// that cannot run (its template is gone, bad, or selects no node) completes
// with the error; one whose setup failed otherwise (HSM or a manifest's
// host not answering, the database busy) stays pending and is set up again
// after a backoff (setupBackoff).
func (s *Service) setupSessions(ctx context.Context) error {
	all, err := s.store.Sessions(ctx)
	if err != nil {
		return err
	}
	now := s.now()
	for _, sess := range all {
		if sess.Status.Status != SessionPending {
			s.retries.forget(sess.Name)
			continue
		}
		if !s.retries.due(sess.Name, now) {
			continue
		}
		err := s.setup(ctx, sess)
		switch {
		case err == nil:
			s.retries.forget(sess.Name)
		case ctx.Err() != nil:
			return ctx.Err()
		case cannotRun(err):
			s.retries.forget(sess.Name)
			s.log.Warn("session_setup_failed", "session", sess.Name, "err", err)
			s.finishSession(ctx, sess.Name, SessionPending, err.Error())
		default:
			n, wait := s.retries.failed(sess.Name, now)
			s.log.Warn("session_setup_retry", "session", sess.Name, "attempt", n, "retry_in", wait, "err", err)
		}
	}
	return nil
}

// cannotRun reports a setup error that another attempt would only repeat:
// the session's template or its nodes are wrong, not a peer down.
func cannotRun(err error) bool {
	if errors.Is(err, problem.ErrUnavailable) {
		return false
	}
	return errors.Is(err, problem.ErrInvalid) || errors.Is(err, problem.ErrNotFound)
}

func (s *Service) setup(ctx context.Context, sess Session) error {
	t, err := s.store.Template(ctx, sess.Tenant, sess.TemplateName)
	if err != nil {
		return err
	}
	own, err := s.tenantNodes(ctx, sess.Tenant)
	if err != nil {
		return err
	}
	targets, err := s.resolveTemplate(ctx, t, sess.Operation)
	if err != nil {
		return err
	}
	if err := s.applyLimit(ctx, targets, sess.Limit); err != nil {
		return err
	}
	for id, tg := range targets {
		if (!sess.IncludeDisabled && tg.node.Enabled != nil && !*tg.node.Enabled) || (own != nil && !own[id]) {
			delete(targets, id)
		}
	}
	if len(targets) == 0 {
		return problem.Invalidf("No nodes were found to act upon")
	}
	ids := make([]string, 0, len(targets))
	for id := range targets {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	now := stamp(s.now())
	err = s.upsert(ctx, ids, func(c *Component) bool {
		s.applySession(c, sess, t, targets[c.ID], now)
		return true
	})
	if err != nil {
		return err
	}
	if s.cmd != nil && !sess.Stage {
		// A configuration that failed before is run again.
		if err := s.cmd.forget(ctx, ids); err != nil {
			return err
		}
	}
	comps := strings.Join(ids, ",")
	_, err = s.modifySession(ctx, sess.Name, func(cur *Session) error {
		if cur.Status.Status != SessionPending {
			return errUnchanged // ended by a PATCH meanwhile
		}
		cur.Status.Status, cur.Components = SessionRunning, comps
		return nil
	})
	if errors.Is(err, errUnchanged) || problemIsNotFound(err) {
		return nil
	}
	if err == nil {
		s.log.Info("session_running", "session", sess.Name, "operation", sess.Operation, "components", len(ids))
	}
	return err
}

// applySession hands one component to a session, as BOS's session setup.
func (s *Service) applySession(c *Component, sess Session, t Template, tg target, now string) {
	bs := t.BootSets[tg.bootSet]
	var art BootArtifacts
	config := ""
	if sess.Operation != OpShutdown {
		art = BootArtifacts{Kernel: tg.images.kernel, Initrd: tg.images.initrd,
			KernelParameters: kernelParams(bs, tg.images, sess.Name)}
		config = configuration(t, bs)
	}
	if sess.Stage {
		c.StagedState = StagedState{BootArtifacts: art, Configuration: config, Session: sess.Name, LastUpdated: now}
		return
	}
	c.DesiredState = DesiredState{BootArtifacts: art, Configuration: config, LastUpdated: now}
	c.Session, c.Enabled, c.Error = sess.Name, true, ""
	c.Status = ComponentStatus{}
	c.EventStats = EventStats{}
	c.LastAction = LastAction{Action: ActionSessionSetup, LastUpdated: now}
	if sess.Operation == OpReboot {
		c.ActualState = ActualState{LastUpdated: now}
	}
}

// configuration is the boot set's configuration, else the template's,
// when enable_cfs is on (its default).
func configuration(t Template, bs BootSet) string {
	if t.EnableCFS != nil && !*t.EnableCFS {
		return ""
	}
	if bs.CFS != nil && bs.CFS.Configuration != "" {
		return bs.CFS.Configuration
	}
	if t.CFS != nil {
		return t.CFS.Configuration
	}
	return ""
}

// completeSessions marks complete the running sessions none of whose
// components is still enabled, and deletes complete sessions past
// cleanup_completed_session_ttl.
func (s *Service) completeSessions(ctx context.Context) error {
	all, err := s.store.Sessions(ctx)
	if err != nil {
		return err
	}
	active := map[string]bool{}
	s.mu.Lock()
	for _, c := range s.comps {
		if c.Enabled && c.Session != "" {
			active[c.Session] = true
		}
	}
	s.mu.Unlock()
	ttl, now := s.options().CompletedTTL, s.now()
	for _, sess := range all {
		switch {
		case sess.Status.Status == SessionRunning && !active[sess.Name]:
			s.finishSession(ctx, sess.Name, SessionRunning, "")
		case sess.Status.Status == SessionComplete && ttl > 0 && sess.Status.EndTime != nil &&
			now.Sub(parseStamp(*sess.Status.EndTime)) > ttl:
			if err := s.store.DeleteSession(ctx, sess.Name); err != nil && !problemIsNotFound(err) {
				return err
			}
		}
	}
	return nil
}

// finishSession completes a session that is still in status from (a
// PATCH may have moved it meanwhile; its change is kept).
func (s *Service) finishSession(ctx context.Context, name, from, errText string) {
	end := stamp(s.now())
	_, err := s.modifySession(ctx, name, func(cur *Session) error {
		if cur.Status.Status != from {
			return errUnchanged
		}
		cur.Status.Status, cur.Status.EndTime = SessionComplete, &end
		if errText != "" {
			cur.Status.Error = &errText
		}
		return nil
	})
	switch {
	case errors.Is(err, errUnchanged) || problemIsNotFound(err):
	case err != nil:
		s.log.Warn("session_complete_not_stored", "session", name, "err", err)
	default:
		s.log.Info("session_complete", "session", name, "error", errText)
	}
}

// enabled returns the enabled components' IDs, sorted, and their versions.
func (s *Service) enabled() ([]string, map[string]int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	seen := map[string]int64{}
	for id, c := range s.comps {
		if c.Enabled {
			ids = append(ids, id)
			seen[id] = c.version
		}
	}
	slices.Sort(ids)
	return ids, seen
}
