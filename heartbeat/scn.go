package heartbeat

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hmsuite/hms/heartbeat/agent"
	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/statemgr/client"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// SCNPath is where hbtd takes HSM's state-change notifications (its own
// route: cray-hbtd takes none).
const SCNPath = agent.BasePath + "/scn"

// powerStates are the HSM states an SCN names when a node's power went
// off or on (PCS, a BMC) or its OS halted: whatever hbtd knew of its
// heartbeat is from before, and its next heartbeat is a first one.
var powerStates = []string{hsm.StateOff, hsm.StateOn, hsm.StateHalt}

// SCN takes an HSM state-change notification. Nodes HSM now has Off, On
// or Halt are forgotten (Tracker.Forget), so that their next heartbeat is
// "Heartbeat started" and makes them Ready in HSM, as cray-hbtd does for
// the first heartbeat of a node it has no record of. Without it a node
// rebooted faster than Warntime would stay On in HSM: hbtd had never
// missed it, so it had nothing to report (cray-hbtd has the same gap, and
// only the minutes a real node takes to reboot hide it).
func (s *Service) SCN(scn hsm.SCN) {
	if slices.Contains(powerStates, scn.State) {
		s.forget(scn.Components)
	}
}

// forget forgets the nodes of ids that are valid xnames (Tracker.Forget).
func (s *Service) forget(ids []string) int {
	names := make([]string, 0, len(ids))
	for _, c := range ids {
		if xname.Valid(c) {
			names = append(names, xname.Normalize(c))
		}
	}
	s.Tracker.Forget(names)
	return len(names)
}

func (a *API) postSCN(w http.ResponseWriter, r *http.Request) {
	var scn hsm.SCN
	if err := httpserver.ReadJSON(w, r, MaxQueryBody, &scn); err != nil {
		problem.Write(w, r, a.log, err)
		return
	}
	a.svc.SCN(scn)
	w.WriteHeader(http.StatusOK)
}

// SCNSource is HSM as hbtd's SCN subscription needs it: the subscription,
// and the nodes' states to catch up from (*client.Client is one).
type SCNSource interface {
	client.Subscriber
	Components(ctx context.Context, query url.Values) ([]hsm.Component, error)
}

// Subscribe has HSM hold hbtd's subscription to the SCNs of powerStates
// at callback until ctx ends (client.Hold: retried until HSM holds it,
// subscribed again when HSM drops or loses it); restored counts the
// latter. hbtd catches up (catchUp) once HSM first holds the
// subscription, on the SCNs it missed while it was down (HSM may have
// dropped or lost the subscription meanwhile; a kept one's backlog comes
// too, and says the same), and each time HSM holds it again after losing
// or changing it, on the SCNs of that gap. Reading HSM after it holds
// the subscription leaves no change between the read and the SCNs.
func (s *Service) Subscribe(ctx context.Context, h SCNSource, callback string, restored prometheus.Counter) {
	on := true
	name := client.SubscriberName("hbtd", callback)
	due := make(chan struct{}, 1)
	kick := func(context.Context) {
		select {
		case due <- struct{}{}:
		default: // one is due already: it reads HSM as it is then
		}
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { s.catchUps(ctx, h, due) })
	first := true
	client.Hold(ctx, h, client.HoldConfig{Log: s.log, Restored: restored, Build: func(v hsm.Values) hsm.Subscription {
		return hsm.Subscription{Subscriber: name, Enabled: &on, Url: callback, States: client.Known(powerStates, v.State)}
	}, Held: func(held bool) {
		if held && first {
			first = false
			kick(ctx)
		}
	}, Regained: kick})
}

// catchUps runs catchUp each time one is due, until ctx ends. One HSM
// does not answer is retried with backoff, 1 s doubling to 30 s, until it
// succeeds or another is due (the subscription restored again), which is
// tried at once.
func (s *Service) catchUps(ctx context.Context, h SCNSource, due <-chan struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-due:
		}
		failures := 0
		for {
			err := s.catchUp(ctx, h)
			if err == nil || ctx.Err() != nil {
				break
			}
			s.log.Warn("hsm_catch_up_failed", "attempt", failures, "err", err)
			wait := min(time.Second<<min(failures, 5), 30*time.Second)
			failures++
			select {
			case <-ctx.Done():
				return
			case <-due:
				failures = 0
			case <-time.After(wait):
			}
		}
	}
}

// catchUp forgets the nodes HSM has Off, On or Halt now, as the SCNs HSM
// did not send while it had lost or changed hbtd's subscription (or
// while hbtd was down) would have (SCN): a node rebooted in that gap
// would otherwise stay On in HSM while it heartbeats, and one powered off
// would be declared dead (Standby) over its Off. A node forgotten
// needlessly (On in HSM because HSM has not yet taken hbtd's Ready) is
// only made Ready again at its next heartbeat.
func (s *Service) catchUp(ctx context.Context, h SCNSource) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	comps, err := h.Components(ctx, url.Values{"type": {string(xname.Node)}, "state": powerStates, "stateonly": {"true"}})
	if err != nil {
		return err
	}
	ids := make([]string, len(comps))
	for i, c := range comps {
		ids[i] = c.ID
	}
	s.log.Info("hsm_caught_up", "nodes", s.forget(ids))
	return nil
}
