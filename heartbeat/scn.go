package heartbeat

import (
	"context"
	"net/http"
	"slices"

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
	if !slices.Contains(powerStates, scn.State) {
		return
	}
	names := make([]string, 0, len(scn.Components))
	for _, c := range scn.Components {
		if xname.Valid(c) {
			names = append(names, xname.Normalize(c))
		}
	}
	s.Tracker.Forget(names)
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

// Subscribe has HSM hold hbtd's subscription to the SCNs of powerStates
// at callback until ctx ends (client.Hold: retried until HSM holds it,
// subscribed again when HSM drops or loses it); restored counts the
// latter.
func (s *Service) Subscribe(ctx context.Context, h client.Subscriber, callback string, restored prometheus.Counter) {
	on := true
	name := client.SubscriberName("hbtd", callback)
	client.Hold(ctx, h, client.HoldConfig{Log: s.log, Restored: restored, Build: func(v hsm.Values) hsm.Subscription {
		return hsm.Subscription{Subscriber: name, Enabled: &on, Url: callback, States: client.Known(powerStates, v.State)}
	}})
}
