package power

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/power/pcs"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// HSM is what pcs asks of the Hardware State Manager (statemgr/client's
// Client is one).
type HSM interface {
	Ready(ctx context.Context) error
	QueryComponents(ctx context.Context, ids []string) ([]hsm.Component, error)
	Components(ctx context.Context, query url.Values) ([]hsm.Component, error)
	ComponentEndpoints(ctx context.Context, query url.Values) ([]hsm.ComponentEndpoint, error)
	RedfishEndpoints(ctx context.Context, query url.Values) ([]hsm.RedfishEndpoint, error)
	BulkStateData(ctx context.Context, ids []string, state, flag string, force bool, info *hsm.ExtendedInfo) error
	ReserveService(ctx context.Context, ids []string, minutes int) (hsm.ReservationResult, error)
	RenewService(ctx context.Context, keys []hsm.KeyedID, minutes int) ([]hsm.FailedID, error)
	ReleaseService(ctx context.Context, keys []hsm.KeyedID) error
	CheckDeputyKeys(ctx context.Context, keys []hsm.KeyedID) (hsm.CheckResult, error)
}

// standardResets are the reset types assumed of a BMC that lists none
// (seen in the field: Gigabyte BMCs intermittently omit
// ResetType@Redfish.AllowableValues); a BMC that refuses one is remembered.
var standardResets = []string{"On", "ForceOff", "GracefulShutdown", "GracefulRestart", "ForceRestart"}

// targets resolves components to Redfish targets from HSM's
// ComponentEndpoints, and for a node HSM has not walked yet from its BMC's
// RedfishEndpoint and Systems collection. It also remembers, per BMC, the
// reset types a BMC without AllowableValues refused.
type targets struct {
	hsm    HSM
	bmc    *BMCClient
	scheme string

	mu      sync.Mutex
	byXname map[string]Target
	bmcBase map[string]string              // BMC xname -> base URL, from RedfishEndpoints
	systems map[string][]string            // BMC xname -> Systems members (fallback)
	refused map[string]map[string]struct{} // BMC xname -> reset types it refused
	power   map[string]string              // resource@base -> its chassis Power URI
}

func newTargets(h HSM, bmc *BMCClient, scheme string) *targets {
	return &targets{hsm: h, bmc: bmc, scheme: scheme, byXname: map[string]Target{}, bmcBase: map[string]string{},
		systems: map[string][]string{}, refused: map[string]map[string]struct{}{}, power: map[string]string{}}
}

// refresh re-reads HSM's ComponentEndpoints and RedfishEndpoints.
func (ts *targets) refresh(ctx context.Context) error {
	ces, err := ts.hsm.ComponentEndpoints(ctx, nil)
	if err != nil {
		return fmt.Errorf("read HSM ComponentEndpoints: %w", err)
	}
	eps, err := ts.hsm.RedfishEndpoints(ctx, nil)
	if err != nil {
		return fmt.Errorf("read HSM RedfishEndpoints: %w", err)
	}
	by := make(map[string]Target, len(ces))
	for _, ce := range ces {
		if t, ok := ts.fromEndpoint(ce); ok {
			by[ce.ID] = t
		}
	}
	bases := make(map[string]string, len(eps))
	for _, ep := range eps {
		if ep.FQDN != "" {
			bases[ep.ID] = ts.scheme + "://" + ep.FQDN
		}
	}
	ts.mu.Lock()
	var moved []string // BMCs whose address changed since the last read
	for id, old := range ts.bmcBase {
		if nb, ok := bases[id]; ok && nb != old {
			moved = append(moved, id)
		}
	}
	ts.byXname, ts.bmcBase = by, bases
	ts.mu.Unlock()
	if r, ok := ts.bmc.creds.(credsRefresher); ok {
		if len(moved) > 0 {
			// HSM drops a BMC's stored login when its address changes; a
			// cached one must not be presented at the new address.
			r.forget(moved)
		}
		r.refresh(ctx)
	}
	return nil
}

func (ts *targets) fromEndpoint(ce hsm.ComponentEndpoint) (Target, bool) {
	if ce.RedfishEndpointFQDN == "" || ce.OdataID == "" {
		return Target{}, false
	}
	t := Target{BMC: ce.RedfishEndpointID, Base: ts.scheme + "://" + ce.RedfishEndpointFQDN, Resource: ce.OdataID}
	var ra *hsm.ResetAction
	switch {
	case ce.RedfishSystemInfo != nil && ce.RedfishSystemInfo.Actions != nil:
		ra = ce.RedfishSystemInfo.Actions.Reset
	case ce.RedfishChassisInfo != nil && ce.RedfishChassisInfo.Actions != nil:
		ra = ce.RedfishChassisInfo.Actions.Reset
	}
	if ra != nil {
		t.ResetURI = ra.Target
		if len(ra.AllowableValues) > 0 {
			t.Allowed = ra.AllowableValues
		}
	}
	return t, true
}

// lookup returns the target of xname, refreshing from HSM once if it is
// unknown. A node without a ComponentEndpoint is found on its BMC.
func (ts *targets) lookup(ctx context.Context, x string) (Target, error) {
	ts.mu.Lock()
	t, ok := ts.byXname[x]
	ts.mu.Unlock()
	if ok {
		return t, nil
	}
	return ts.fallback(ctx, x)
}

// fallback finds node n<i> as member i of its BMC's Systems collection,
// and a chassis or slot on its chassis controller (see enclosure).
func (ts *targets) fallback(ctx context.Context, x string) (Target, error) {
	if t, ok := ts.enclosure(x); ok {
		return t, nil
	}
	bmcX := xname.Parent(x)
	ts.mu.Lock()
	base, ok := ts.bmcBase[bmcX]
	members, known := ts.systems[bmcX]
	ts.mu.Unlock()
	if !ok || xname.TypeOf(x) != xname.Node {
		return Target{}, fmt.Errorf("no Redfish endpoint for %s in HSM", x)
	}
	t := Target{BMC: bmcX, Base: base}
	if !known {
		var err error
		if members, err = ts.bmc.systems(ctx, t); err != nil {
			return Target{}, fmt.Errorf("list Systems of %s: %w", bmcX, err)
		}
		slices.Sort(members)
		ts.mu.Lock()
		ts.systems[bmcX] = members
		ts.mu.Unlock()
	}
	i, err := strconv.Atoi(x[strings.LastIndexByte(x, 'n')+1:])
	if err != nil || i >= len(members) {
		return Target{}, fmt.Errorf("%s: BMC %s has %d systems", x, bmcX, len(members))
	}
	t.Resource = members[i]
	ts.mu.Lock()
	ts.byXname[x] = t
	ts.mu.Unlock()
	return t, nil
}

// enclosure is the target of a chassis (xXcC) or of a slot (compute
// module xXcCsS, router module xXcCrR) HSM has no ComponentEndpoint for:
// the Chassis resource of the chassis controller xXcCb0 named as Cray EX
// controllers name them ("Enclosure", "Blade<S>", "Perif<R>"), as CSM's
// HSM maps them when it walks a cC. The reset action is read from it.
func (ts *targets) enclosure(x string) (Target, bool) {
	var chassis, id string
	switch xname.TypeOf(x) {
	case xname.Chassis:
		chassis, id = x, "Enclosure"
	case xname.ComputeModule:
		chassis, id = xname.Parent(x), "Blade"+x[strings.LastIndexByte(x, 's')+1:]
	case xname.RouterModule:
		chassis, id = xname.Parent(x), "Perif"+x[strings.LastIndexByte(x, 'r')+1:]
	default:
		return Target{}, false
	}
	ts.mu.Lock()
	base, ok := ts.bmcBase[chassis+"b0"]
	ts.mu.Unlock()
	if !ok {
		return Target{}, false
	}
	return Target{BMC: chassis + "b0", Base: base, Resource: "/redfish/v1/Chassis/" + id}, true
}

// allowed is the reset types t supports: HSM's list, else the live
// resource's (its AllowableValues or its ActionInfo), else the standard
// set less what the BMC refused before.
func (ts *targets) allowed(ctx context.Context, t Target, live *resetAction) []string {
	if len(t.Allowed) > 0 {
		return t.Allowed
	}
	if live != nil && len(live.Allowable) > 0 {
		return live.Allowable
	}
	if live != nil && live.ActionInfo != "" {
		if vals := ts.actionInfo(ctx, t, live.ActionInfo); len(vals) > 0 {
			return vals
		}
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	var out []string
	for _, r := range standardResets {
		if _, no := ts.refused[t.BMC][r]; !no {
			out = append(out, r)
		}
	}
	return out
}

// refuse records that t's BMC refused resetType, when it gave no list.
func (ts *targets) refuse(t Target, resetType string) {
	if len(t.Allowed) > 0 {
		return
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.refused[t.BMC] == nil {
		ts.refused[t.BMC] = map[string]struct{}{}
	}
	ts.refused[t.BMC][resetType] = struct{}{}
}

// actionInfo reads ResetType's AllowableValues from an ActionInfo resource.
func (ts *targets) actionInfo(ctx context.Context, t Target, uri string) []string {
	b, err := ts.bmc.do(ctx, t, "GET", uri, nil)
	if err != nil {
		return nil
	}
	var ai struct {
		Parameters []struct {
			Name            string   `json:"Name"`
			AllowableValues []string `json:"AllowableValues"`
		} `json:"Parameters"`
	}
	if json.Unmarshal(b, &ai) != nil {
		return nil
	}
	for _, p := range ai.Parameters {
		if p.Name == "ResetType" {
			return p.AllowableValues
		}
	}
	return nil
}

// supportedTransitions maps reset types to PCS's supportedPowerTransitions,
// in their order, as PCS builds the list.
func supportedTransitions(allowed []string) []string {
	var out []string
	add := func(s string) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	var on, off bool
	for _, a := range allowed {
		switch a {
		case "ForceOff":
			add(string(pcs.OpForceOff))
		case "GracefulRestart", "ForceRestart":
			add(string(pcs.OpSoftRestart))
		case "Off", "GracefulShutdown":
			add(string(pcs.OpSoftOff))
			add(string(pcs.OpOff))
			off = true
		case "On":
			add(string(pcs.OpOn))
			on = true
		}
	}
	if on && off {
		add(string(pcs.OpInit))
		add(string(pcs.OpHardRestart))
		add(string(pcs.OpSoftRestart))
	}
	return out
}
