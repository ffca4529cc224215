package orchestrator

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hmsuite/hms/ipxe/bss"
	"github.com/hmsuite/hms/power/pcs"
)

// observation is what the peers say about one component.
type observation struct {
	power, powerErr string
	hsmState        string
	// nid is HSM's NID of the node (its hostname is nid%06d).
	nid *int
	// cfs: bos configures nodes through CFS (-cfs-url); cfsDesired and
	// cfsStatus are CFS's desired_config and configuration_status.
	cfs                             bool
	cfsDesired, cfsStatus, cfsError string
	// fetched is when the node last fetched its boot script from BSS.
	fetched time.Time
}

// observe is BOS's status operator: it reads the enabled components' power
// (PCS), state (HSM) and boot-script fetches (BSS), and moves each one's
// phase: the decision table is decide's.
func (s *Service) observe(ctx context.Context) error {
	ids, seen := s.enabled()
	if len(ids) == 0 {
		return nil
	}
	obs, err := s.gather(ctx, ids)
	if err != nil {
		return err
	}
	opts, now := s.options(), s.now()
	s.mu.Lock()
	s.observed = obs
	s.mu.Unlock()
	// A component PATCHed while the peers were read is decided next pass.
	return s.update(ctx, ids, &guard{seen: seen}, func(c *Component) bool {
		o, ok := obs[c.ID]
		if !ok {
			o = observation{power: pcs.PowerUndefined, powerErr: "not reported", cfs: s.cfs != nil}
		}
		return decide(c, o, opts, now)
	})
}

func (s *Service) gather(ctx context.Context, ids []string) (map[string]observation, error) {
	out := make(map[string]observation, len(ids))
	start := time.Now()
	ps, err := s.pcs.PowerStatus(ctx, pcs.PowerStatusRequest{Xnames: ids})
	if err != nil {
		return nil, fmt.Errorf("pcs power-status: %w", err)
	}
	for _, p := range ps {
		out[p.Xname] = observation{power: p.PowerState, powerErr: p.Error, cfs: s.cfs != nil}
	}
	pcsTook := time.Since(start)
	hs, err := s.hsm.QueryComponents(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("hsm components: %w", err)
	}
	for _, h := range hs {
		o := out[h.ID]
		o.hsmState, o.nid = h.State, h.NID
		out[h.ID] = o
	}
	hsmTook := time.Since(start) - pcsTook
	hist, err := s.bss.EndpointHistory(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("bss endpoint-history: %w", err)
	}
	for _, h := range hist {
		if o, ok := out[h.Name]; ok && h.Endpoint == bss.EndpointBootscript {
			o.fetched = time.Unix(h.LastEpoch, 0)
			out[h.Name] = o
		}
	}
	s.log.Debug("observed", "components", len(ids), "pcs", pcsTook.Round(time.Millisecond),
		"hsm", hsmTook.Round(time.Millisecond), "bss", (time.Since(start) - pcsTook - hsmTook).Round(time.Millisecond))
	return out, s.gatherCFS(ctx, out)
}

// gatherCFS reads from CFS the components that have a configuration.
func (s *Service) gatherCFS(ctx context.Context, out map[string]observation) error {
	if s.cfs == nil {
		return nil
	}
	var ids []string
	s.mu.Lock()
	for id := range out {
		if c := s.comps[id]; c != nil && c.DesiredState.Configuration != "" {
			ids = append(ids, id)
		}
	}
	s.mu.Unlock()
	slices.Sort(ids)
	for len(ids) > 0 {
		n := min(len(ids), 500)
		got, err := s.cfs.CFSComponents(ctx, ids[:n])
		if err != nil {
			return fmt.Errorf("cfs components: %w", err)
		}
		for _, c := range got {
			if o, ok := out[c.ID]; ok {
				o.cfsDesired, o.cfsStatus, o.cfsError = c.DesiredConfig, c.ConfigurationStatus, c.Error
				out[c.ID] = o
			}
		}
		ids = ids[n:]
	}
	return nil
}

// decide moves one enabled component along, from what was observed:
//
//	phase         observed                         next
//	""            on, runs desired image, Ready    done (stable, disabled)
//	""            on, otherwise                    powering_off
//	""            not on, shutdown                 done (unknown power: powering_off)
//	""            not on                           powering_on
//	powering_off  off, shutdown                    done
//	powering_off  off                              powering_on
//	powering_on   on, runs desired image, Ready    done
//	powering_on   on, not booted in max_boot_wait  powering_off (again), or failed past the retries
//	configuring   CFS configured / failed           done / failed (no CFS: done)
//
// "done" above is configured's: with a configuration and a CFS, the
// component goes configuring first, until CFS has configured it.
//
// Power that PCS cannot read counts as neither on nor off and is noted in
// error; BOS puts such a node on_hold, which never ends: bos lets the power
// retries decide, so a node whose BMC never answers ends failed.
func decide(c *Component, o observation, opts Options, now time.Time) bool {
	before := *c
	noteBoot(c, o, now)
	on, off := o.power == pcs.PowerOn, o.power == pcs.PowerOff
	if !on && !off {
		// Power PCS cannot read is neither on nor off: the power operators
		// act, and their retries end in failed, naming this error.
		c.Error = "power state unknown to PCS: " + o.powerErr
	} else if strings.HasPrefix(c.Error, "power state unknown to PCS: ") {
		c.Error = ""
	}
	shutdown := c.DesiredState.BootArtifacts.Kernel == ""
	switch c.Status.Phase {
	case PhaseNone:
		switch {
		case on && !shutdown && booted(c) && o.hsmState == "Ready":
			configured(c, o)
		case on || (shutdown && !off):
			c.Status.Phase = PhasePoweringOff
		case shutdown:
			done(c)
		default:
			c.Status.Phase = PhasePoweringOn
		}
	case PhasePoweringOff:
		if off && shutdown {
			done(c)
		} else if off {
			c.Status.Phase = PhasePoweringOn
		}
	case PhasePoweringOn:
		switch {
		case on && booted(c) && o.hsmState == "Ready":
			configured(c, o)
		case on && c.LastAction.Action == ActionPowerOn && now.Sub(parseStamp(c.LastAction.LastUpdated)) >= opts.MaxBootWait:
			if c.EventStats.PowerOnAttempts >= retries(c, opts) {
				fail(c, fmt.Sprintf("node did not boot its desired image within max_boot_wait_time after %d power-on attempts", c.EventStats.PowerOnAttempts))
			} else {
				c.Status.Phase = PhasePoweringOff
			}
		}
	case PhaseConfiguring:
		configured(c, o)
	}
	return !sameComponent(*c, before)
}

// configured moves a component that runs its desired image on: done when
// it needs no configuration (none named, or bos has neither CFS nor a
// configuration command: the step is skipped) or it was configured as
// desired; failed when that failed; configuring while CFS (or the command)
// works on it.
func configured(c *Component, o observation) {
	want := c.DesiredState.Configuration
	switch {
	case want == "" || !o.cfs:
		done(c)
	case o.cfsDesired == want && o.cfsStatus == CFSConfigured:
		done(c)
	case o.cfsDesired == want && o.cfsStatus == CFSFailed && o.cfsError != "":
		fail(c, o.cfsError)
	case o.cfsDesired == want && o.cfsStatus == CFSFailed:
		fail(c, fmt.Sprintf("CFS failed to apply configuration %s", want))
	default:
		c.Status.Phase = PhaseConfiguring
	}
}

// noteBoot records the desired artifacts as the actual ones once BSS saw
// the node fetch its boot script after bos powered it on.
func noteBoot(c *Component, o observation, now time.Time) {
	if c.Status.Phase != PhasePoweringOn || c.LastAction.Action != ActionPowerOn || o.fetched.IsZero() ||
		c.DesiredState.BSSToken == "" || c.ActualState.BSSToken == c.DesiredState.BSSToken {
		return
	}
	if o.fetched.Unix() < parseStamp(c.LastAction.LastUpdated).Unix() {
		return
	}
	c.ActualState = ActualState{BootArtifacts: c.DesiredState.BootArtifacts, BSSToken: c.DesiredState.BSSToken,
		LastUpdated: stamp(now)}
}

// booted reports whether a component runs its desired image: the same
// kernel, initrd and parameters (bos_session_id= aside, which changes with
// every session) and, when bos set the boot parameters, the same token.
func booted(c *Component) bool {
	d, a := c.DesiredState, c.ActualState
	return d.BootArtifacts.Kernel == a.BootArtifacts.Kernel && d.BootArtifacts.Initrd == a.BootArtifacts.Initrd &&
		withoutSession(d.BootArtifacts.KernelParameters) == withoutSession(a.BootArtifacts.KernelParameters) &&
		(d.BSSToken == "" || d.BSSToken == a.BSSToken)
}

func withoutSession(params string) string {
	f := strings.Fields(params)
	out := f[:0]
	for _, p := range f {
		if !strings.HasPrefix(p, "bos_session_id=") {
			out = append(out, p)
		}
	}
	return strings.Join(out, " ")
}

func retries(c *Component, opts Options) int {
	if c.RetryPolicy != nil {
		return *c.RetryPolicy
	}
	return opts.DefaultRetryPolicy
}

// done: the component reached its desired state; bos lets go of it.
func done(c *Component) {
	c.Status = ComponentStatus{}
	c.Enabled, c.Error = false, ""
	c.EventStats = EventStats{}
}

// fail: the component cannot reach its desired state; its phase stays to
// show where it stopped.
func fail(c *Component, msg string) {
	c.Status.StatusOverride = StatusFailed
	c.Enabled, c.Error = false, msg
	c.LastAction.Failed = true
}

func sameComponent(a, b Component) bool {
	ap, bp := a.RetryPolicy, b.RetryPolicy
	a.RetryPolicy, b.RetryPolicy = nil, nil
	return a == b && (ap == bp || (ap != nil && bp != nil && *ap == *bp))
}
