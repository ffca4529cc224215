package orchestrator

import (
	"context"
	"errors"
	"slices"
)

// ApplyStagedResult is the answer of POST /v2/applystaged.
type ApplyStagedResult struct {
	Succeeded []string `json:"succeeded"`
	Failed    []string `json:"failed"`
	Ignored   []string `json:"ignored"`
}

// ApplyStaged makes the staged state of each named component its desired
// state and hands the component to the staged session. A reboot session
// forgets the actual state, so the node is rebooted even if it runs the
// image already; a boot session leaves a node that runs it alone (the
// Slurm reboot path rebuilds only nodes whose image changes); a node
// rebuilt is configured anew by -config-command. Components with nothing
// staged are ignored; unknown ones fail.
func (s *Service) ApplyStaged(ctx context.Context, xnames []string) (ApplyStagedResult, error) {
	res := ApplyStagedResult{Succeeded: []string{}, Failed: []string{}, Ignored: []string{}}
	ops := map[string]string{}
	clear := s.options().ClearStage
	for _, id := range xnames {
		c, err := s.Component(id)
		if err != nil {
			res.Failed = append(res.Failed, id)
			continue
		}
		name := c.StagedState.Session
		if name == "" {
			res.Ignored = append(res.Ignored, id)
			continue
		}
		if _, ok := ops[name]; !ok {
			sess, err := s.store.Session(ctx, name)
			if err != nil {
				res.Failed = append(res.Failed, id)
				continue
			}
			ops[name] = sess.Operation
		}
		res.Succeeded = append(res.Succeeded, id)
	}
	now := stamp(s.now())
	var rebuilt []string
	err := s.update(ctx, res.Succeeded, nil, func(c *Component) bool {
		op := ops[c.StagedState.Session]
		c.DesiredState = DesiredState{BootArtifacts: c.StagedState.BootArtifacts,
			Configuration: c.StagedState.Configuration, LastUpdated: now}
		c.Session, c.Enabled, c.Error = c.StagedState.Session, true, ""
		c.LastAction = LastAction{Action: ActionApplyStaged, LastUpdated: now}
		c.Status = ComponentStatus{}
		c.EventStats = EventStats{}
		if op == OpReboot {
			c.ActualState = ActualState{LastUpdated: now}
		}
		if !booted(c) {
			rebuilt = append(rebuilt, c.ID)
		}
		if clear {
			c.StagedState = StagedState{LastUpdated: now}
		}
		return true
	})
	if err != nil {
		return ApplyStagedResult{}, err
	}
	if s.cmd != nil {
		// A node that boots anew is configured anew, even with the
		// configuration it had (as a session's setup does).
		if err := s.cmd.forget(ctx, rebuilt); err != nil {
			return ApplyStagedResult{}, err
		}
	}
	slices.Sort(res.Succeeded)
	for name := range ops {
		s.reopen(ctx, name)
	}
	s.Wake()
	return res, nil
}

// reopen runs again a staged session that completed with nothing to do, so
// its status and completion follow the components it now has.
func (s *Service) reopen(ctx context.Context, name string) {
	_, err := s.modifySession(ctx, name, func(sess *Session) error {
		if sess.Status.Status != SessionComplete {
			return errUnchanged
		}
		sess.Status.Status, sess.Status.EndTime = SessionRunning, nil
		return nil
	})
	if err != nil && !errors.Is(err, errUnchanged) {
		s.log.Warn("staged_session_not_reopened", "session", name, "err", err)
	}
}
