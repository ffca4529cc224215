package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/hmsuite/hms/ipxe/bss"
	"github.com/hmsuite/hms/power/pcs"
)

// plans are the power operators' work of one pass, and what it was planned
// from: each component's version and status then.
type plans struct {
	on, graceful, forceful []string
	failed                 map[string]string // id -> error
	seen                   map[string]int64
	status                 map[string]string
}

// guard keeps the pass's changes off components a PATCH moved since the
// plan: one still enabled in the planned status takes them; any other
// (disabled, given another phase, failed by hand) is left as patched.
func (p plans) guard(also func(c *Component) bool) *guard {
	return &guard{seen: p.seen, still: func(c *Component) bool {
		return c.Enabled && c.Status.StatusOverride == "" && c.Status.Status == p.status[c.ID] && (also == nil || also(c))
	}}
}

// act runs the configuration step (setConfigs; startConfigs with a
// configuration command) and the power operators: power-on (boot parameters into BSS, then
// PCS On), graceful power-off (PCS Soft-Off), and forceful power-off
// (PCS Force-Off) for nodes still on max_power_off_wait_time after the
// graceful one. A component whose action is due again past its
// retry_policy fails.
func (s *Service) act(ctx context.Context) error {
	p := s.plan(s.options(), s.now())
	if len(p.failed) > 0 {
		ids := make([]string, 0, len(p.failed))
		for id := range p.failed {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		if err := s.update(ctx, ids, p.guard(nil), func(c *Component) bool { fail(c, p.failed[c.ID]); return true }); err != nil {
			return err
		}
	}
	return errors.Join(s.setConfigs(ctx), s.startConfigs(ctx), s.powerOn(ctx, p, p.on),
		s.powerOff(ctx, p, p.graceful, pcs.OpSoftOff, ActionPowerOffGraceful),
		s.powerOff(ctx, p, p.forceful, pcs.OpForceOff, ActionPowerOffForceful))
}

func (s *Service) plan(opts Options, now time.Time) plans {
	p := plans{failed: map[string]string{}, seen: map[string]int64{}, status: map[string]string{}}
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, c := range s.comps {
		if !c.Enabled || c.Status.StatusOverride != "" {
			continue
		}
		p.seen[id], p.status[id] = c.version, c.Status.Status
		since := now.Sub(parseStamp(c.LastAction.LastUpdated))
		off := s.observed[id].power != pcs.PowerOn
		// A transition bos gave up on ends its action's wait now.
		a, gaveUp := s.overdue[id]
		overdue := gaveUp && a.Action == c.LastAction.Action && a.LastUpdated == c.LastAction.LastUpdated
		switch c.Status.Status {
		case StatusPowerOnPending:
			p.on = append(p.on, id)
		case StatusPowerOnCalled:
			if !off || (since < opts.MaxPowerOnWait && !overdue) {
				continue
			}
			if c.EventStats.PowerOnAttempts >= retries(c, opts) {
				p.failed[id] = powerError(c, "power on", c.EventStats.PowerOnAttempts)
			} else {
				p.on = append(p.on, id)
			}
		case StatusPowerOffPending:
			p.graceful = append(p.graceful, id)
		case StatusPowerOffGracefullyCalled:
			switch {
			case since >= opts.MaxPowerOffWait:
				p.forceful = append(p.forceful, id)
			case overdue && c.EventStats.PowerOffGracefulAttempts < retries(c, opts):
				// A Soft-Off bos gave up on (PCS lost it, or does not
				// answer about it) is sent again, not escalated: the node
				// may be shutting down; Force-Off waits out
				// max_power_off_wait_time. Past the retries it just waits.
				p.graceful = append(p.graceful, id)
			}
		case StatusPowerOffForcefullyCalled:
			if since < opts.MaxPowerOffWait && !overdue {
				continue
			}
			if c.EventStats.PowerOffForcefulAttempts >= retries(c, opts) {
				p.failed[id] = powerError(c, "power off", c.EventStats.PowerOffForcefulAttempts)
			} else {
				p.forceful = append(p.forceful, id)
			}
		}
	}
	for id, a := range s.overdue {
		if c := s.comps[id]; c == nil || c.LastAction.Action != a.Action || c.LastAction.LastUpdated != a.LastUpdated {
			delete(s.overdue, id) // acted on since
		}
	}
	slices.Sort(p.on)
	slices.Sort(p.graceful)
	slices.Sort(p.forceful)
	return p
}

func powerError(c *Component, what string, attempts int) string {
	msg := fmt.Sprintf("failed to %s after %d attempts", what, attempts)
	if c.Error != "" {
		msg += ": " + c.Error
	}
	return msg
}

// powerOn sets the boot parameters of each group of nodes that boot the
// same artifacts (one BSS PUT, one referral token per group), then asks
// PCS to power them on.
func (s *Service) powerOn(ctx context.Context, p plans, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	groups := map[BootArtifacts][]string{}
	var order []BootArtifacts
	arts := map[string]BootArtifacts{}
	g := p.guard(nil)
	s.mu.Lock()
	for _, id := range ids {
		c, ok := s.comps[id]
		if !ok || !g.allows(c) {
			continue // deleted (DELETE /v2/components/{id}) or moved by a PATCH since the pass planned it
		}
		a := c.DesiredState.BootArtifacts
		arts[id] = a
		if groups[a] == nil {
			order = append(order, a)
		}
		groups[a] = append(groups[a], id)
	}
	s.mu.Unlock()
	tokens := map[string]string{}
	var ready []string
	for _, a := range order {
		hosts := groups[a]
		start := time.Now()
		tok, err := s.bss.PutBootParamsToken(ctx, bss.BootParams{Hosts: hosts, Kernel: a.Kernel, Initrd: a.Initrd,
			Params: a.KernelParameters})
		s.log.Debug("bss_boot_parameters_put", "hosts", len(hosts), "took", time.Since(start).Round(time.Millisecond))
		if err != nil {
			s.recordError(ctx, hosts, p.guard(nil), ActionPowerOn, fmt.Errorf("set boot parameters in BSS: %w", err))
			continue
		}
		for _, h := range hosts {
			tokens[h] = tok
		}
		ready = append(ready, hosts...)
	}
	// The token is for the artifacts BSS was given: a component whose
	// desired artifacts a PATCH changed meanwhile does not take it.
	same := func(c *Component) bool { return c.DesiredState.BootArtifacts == arts[c.ID] }
	return s.transition(ctx, ready, p.guard(same), pcs.OpOn, ActionPowerOn, func(c *Component) {
		c.DesiredState.BSSToken = tokens[c.ID]
		c.EventStats.PowerOnAttempts++
	})
}

func (s *Service) powerOff(ctx context.Context, p plans, ids []string, op pcs.Operation, action string) error {
	return s.transition(ctx, ids, p.guard(nil), op, action, func(c *Component) {
		if op == pcs.OpForceOff {
			c.EventStats.PowerOffForcefulAttempts++
		} else {
			c.EventStats.PowerOffGracefulAttempts++
		}
	})
}

// transition starts PCS transitions over ids, one per
// max_component_batch_size, and records the action on each component that
// g allows (a component PATCHed meanwhile keeps the PATCH's state). The
// batches start together, transitionStarts at a time: PCS takes a while to
// create a transition of thousands of nodes, and one after another the
// last batch waited for every earlier one (1.3-1.7 s each for 2,800 nodes
// on a loaded machine, docs/benchmarks/bos.md).
func (s *Service) transition(ctx context.Context, ids []string, g *guard, op pcs.Operation, action string, note func(*Component)) error {
	if len(ids) == 0 {
		return nil
	}
	batch := s.options().BatchSize
	if batch <= 0 {
		batch = len(ids)
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	slots := make(chan struct{}, transitionStarts)
	for part := range slices.Chunk(ids, batch) {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			err := s.startBatch(ctx, part, g, op, action, note)
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// transitionStarts is how many of an operator's PCS transitions are
// created at once.
const transitionStarts = 4

// startBatch starts one PCS transition over part and records it.
func (s *Service) startBatch(ctx context.Context, part []string, g *guard, op pcs.Operation, action string, note func(*Component)) error {
	locs := make([]pcs.Location, len(part))
	for i, id := range part {
		locs[i] = pcs.Location{Xname: id}
	}
	start := time.Now()
	created, err := s.pcs.StartTransition(ctx, op, 0, locs)
	now := stamp(s.now())
	if err != nil {
		err = fmt.Errorf("PCS %s: %w", op, err)
	} else {
		s.tracked.add(created.TransitionID, opened{op: op, action: action, stamp: now, ids: part})
		s.log.Debug("pcs_transition_started", "operation", op, "transition", created.TransitionID, "components", len(part),
			"took", time.Since(start).Round(time.Millisecond))
	}
	uerr := s.update(ctx, part, g, func(c *Component) bool {
		note(c)
		c.LastAction = LastAction{Action: action, LastUpdated: now, Failed: err != nil}
		if err != nil {
			c.Error = err.Error()
		}
		return true
	})
	return errors.Join(err, uerr)
}

// recordError notes a failed action; the component stays where it was and
// the action is retried when due.
func (s *Service) recordError(ctx context.Context, ids []string, g *guard, action string, err error) {
	now := stamp(s.now())
	if uerr := s.update(ctx, ids, g, func(c *Component) bool {
		c.LastAction = LastAction{Action: action, LastUpdated: now, Failed: true}
		c.EventStats.PowerOnAttempts++
		c.Error = err.Error()
		return true
	}); uerr != nil {
		s.log.Warn("component_error_not_stored", "err", uerr)
	}
}
