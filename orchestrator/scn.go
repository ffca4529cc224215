package orchestrator

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hmsuite/hms/statemgr/client"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// SCNPath is where bos takes HSM's state-change notifications.
const SCNPath = Base + "/scn"

// scnStates are the HSM states whose changes move a BOS component: a node
// reaching On or Off after a power call, Ready after its boot, and the
// states it passes through on the way down.
var scnStates = []string{"On", "Off", "Ready", "Standby", "Halt"}

// SCN wakes the operators when an HSM state change names a component bos
// is moving; the pass that follows reads every peer as usual, so an SCN is
// only ever a hint (lost or late ones cost the fallback poll's delay).
func (s *Service) SCN(scn hsm.SCN) {
	s.mu.Lock()
	relevant := slices.ContainsFunc(scn.Components, func(id string) bool {
		c := s.comps[id]
		return c != nil && c.Enabled
	})
	s.mu.Unlock()
	if relevant {
		s.Wake()
	}
}

func (a *API) scn(w http.ResponseWriter, r *http.Request) {
	var scn hsm.SCN
	b, err := body(w, r)
	if err == nil {
		err = decodeStrict(b, &scn)
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.svc.SCN(scn)
	w.WriteHeader(http.StatusOK)
}

// Subscribe has HSM hold bos's subscription to the SCNs of scnStates at
// callback until ctx ends (client.Hold: retried until HSM holds it,
// subscribed again when HSM drops or loses it; restored counts the
// latter). While HSM holds it the operators poll only every
// Config.FallbackPoll; while it does not, at polling_frequency. Once it
// is restored the operators pass at once: the pass reads every peer, so
// it sees what the SCNs HSM did not send meanwhile would have woken them
// for (a subscription found gone wakes them as held changes; one whose
// filters were changed does through Regained).
func (s *Service) Subscribe(ctx context.Context, h client.Subscriber, callback string, restored prometheus.Counter) {
	on := true
	name := client.SubscriberName("bos", callback)
	client.Hold(ctx, h, client.HoldConfig{Log: s.log, Restored: restored, Build: func(v hsm.Values) hsm.Subscription {
		return hsm.Subscription{Subscriber: name, Enabled: &on, Url: callback, States: client.Known(scnStates, v.State)}
	}, Held: func(held bool) {
		s.subscribed.Store(held)
		s.Wake() // the poll interval changed
	}, Regained: func(context.Context) { s.Wake() }, After: s.cfg.SubscriptionAfter})
}

// nextPass is how long the operators may sleep after a pass: the poll
// (polling_frequency, or Config.FallbackPoll once HSM sends SCNs), but no
// later than the first timeout a component or a session setup waits for.
func (s *Service) nextPass() time.Duration {
	opts, now := s.options(), s.now()
	poll := opts.Polling
	if s.subscribed.Load() {
		poll = max(poll, s.cfg.FallbackPoll)
	}
	if poll <= 0 {
		poll = time.Second
	}
	due := now.Add(poll)
	if at, ok := s.retries.next(); ok && at.Before(due) {
		due = at
	}
	if at, ok := s.firstTimeout(opts, now); ok && at.Before(due) {
		due = at
	}
	return max(due.Sub(now), 0)
}

// firstTimeout is the earliest moment after now that an enabled
// component's wait ends (power-on, boot, power-off), when the operators act
// again without being told anything; or the next discovery. Moments past
// are not counted: a pass saw them already (a power-on past its wait whose
// node is on waits for its boot, not for another pass).
func (s *Service) firstTimeout(opts Options, now time.Time) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var first time.Time
	note := func(t time.Time) {
		if t.After(now) && (first.IsZero() || t.Before(first)) {
			first = t
		}
	}
	if opts.Discovery > 0 {
		note(s.lastDiscovery.Add(opts.Discovery))
	}
	for _, c := range s.comps {
		if !c.Enabled || c.Status.StatusOverride != "" {
			continue
		}
		last := parseStamp(c.LastAction.LastUpdated)
		switch c.Status.Status {
		case StatusPowerOnCalled:
			note(last.Add(opts.MaxPowerOnWait))
			note(last.Add(opts.MaxBootWait))
		case StatusPowerOffGracefullyCalled, StatusPowerOffForcefullyCalled:
			note(last.Add(opts.MaxPowerOffWait))
		}
	}
	return first, !first.IsZero()
}
