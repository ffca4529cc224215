package power

import (
	"context"
	"strings"
	"sync"

	"github.com/hmsuite/hms/internal/xname"
	"github.com/hmsuite/hms/power/pcs"
)

// Parent/child ordering. Within one transition, a component that feeds power
// to others (a chassis, a compute or router module: a slot) is powered on
// before the components under it, and powered off after them, as CSM's PCS
// sequences a transition by component type (chassis, then slots, then nodes
// on the way up; the reverse on the way down). A restart does both halves:
// children off, parents off, parents on, children on.
//
// Ordering links only components of the same transition: pcs does not add
// a chassis's nodes to a transition that names only the chassis (neither
// does PCS; `cray power transition --include children` expands the list on
// the caller's side). Controllers (BMCs) are not ordered: they run on
// standby power and their resets are manager resets. A PDU outlet
// (CabinetPDUPowerConnector) is not linked to what it feeds: that mapping
// lives in SLS, not in the xname.

// powerParents are the types whose power feeds the components below them.
var powerParents = map[xname.Type]bool{xname.Chassis: true, xname.ComputeModule: true, xname.RouterModule: true}

// gate is one task's progress as the tasks ordered after it see it.
type gate struct {
	offOnce, endOnce sync.Once
	offDone          chan struct{} // closed once the task is past its off part
	ended            chan struct{} // closed once the task has ended
}

func newGate() *gate { return &gate{offDone: make(chan struct{}), ended: make(chan struct{})} }

func (g *gate) passOff() { g.offOnce.Do(func() { close(g.offDone) }) }

func (g *gate) end() {
	g.passOff()
	g.endOnce.Do(func() { close(g.ended) })
}

// order holds a transition's parent/child links and its tasks' gates.
type order struct {
	gates    map[*Task]*gate
	parents  map[*Task][]*Task // powered on before the task
	children map[*Task][]*Task // powered off before the task
	r        *run
}

// newOrder links the tasks of r by the xname hierarchy. Tasks already
// ended (before a restart, or refused a reservation) have their gates open.
func newOrder(r *run) *order {
	o := &order{gates: map[*Task]*gate{}, parents: map[*Task][]*Task{}, children: map[*Task][]*Task{}, r: r}
	r.mu.Lock()
	defer r.mu.Unlock()
	by := make(map[string]*Task, len(r.tr.Tasks))
	for _, t := range r.tr.Tasks {
		by[t.Xname] = t
		g := newGate()
		if t.final() {
			g.end()
		}
		o.gates[t] = g
	}
	for _, t := range r.tr.Tasks {
		if xname.IsController(xname.TypeOf(t.Xname)) {
			continue
		}
		for p := xname.Parent(t.Xname); p != ""; p = xname.Parent(p) {
			if pt, ok := by[p]; ok && powerParents[xname.TypeOf(p)] {
				o.parents[t] = append(o.parents[t], pt)
				o.children[pt] = append(o.children[pt], t)
			}
		}
	}
	return o
}

// hasParents reports whether a parent of t is in the same transition.
func (o *order) hasParents(t *Task) bool { return o != nil && len(o.parents[t]) > 0 }

// afterChildren waits until every child of t in the transition is off (or
// has ended). It returns a failed outcome naming the first child that
// failed, and stop when ctx ended first.
func (o *order) afterChildren(ctx context.Context, t *Task, act string) (fail *outcome, stop bool) {
	if o == nil {
		return nil, false
	}
	return o.await(ctx, o.children[t], func(g *gate) chan struct{} { return g.offDone }, act)
}

// afterParents waits until every parent of t in the transition has ended,
// and fails t if one of them did not succeed.
func (o *order) afterParents(ctx context.Context, t *Task, act string) (fail *outcome, stop bool) {
	if o == nil {
		return nil, false
	}
	return o.await(ctx, o.parents[t], func(g *gate) chan struct{} { return g.ended }, act)
}

// await waits on each dependency's channel in turn and stops at the first
// that failed.
func (o *order) await(ctx context.Context, deps []*Task, ch func(*gate) chan struct{}, act string) (*outcome, bool) {
	for _, d := range deps {
		select {
		case <-ch(o.gates[d]):
		case <-ctx.Done():
			return nil, true
		}
		if f := o.depFailure(d, act); f != nil {
			return f, false
		}
	}
	return nil, false
}

// depFailure is the outcome of a task whose dependency dep ended without
// succeeding, in PCS's texts (description and error alike), or nil.
func (o *order) depFailure(dep *Task, act string) *outcome {
	r := o.r
	r.mu.Lock()
	status, desc, errText := dep.Status, dep.Description, dep.Error
	r.mu.Unlock()
	if status == pcs.TaskSucceeded || (status != pcs.TaskFailed && status != pcs.TaskUnsupported) {
		return nil
	}
	var msg string
	switch {
	case strings.HasPrefix(errText, "Invalid deputy key and unable to reserve"):
		msg = "Invalid deputy key and unable to reserve dependent component, " + dep.Xname + "."
	case strings.HasPrefix(errText, "Unable to reserve"), strings.HasPrefix(desc, "Error acquiring reservations"):
		msg = "Unable to reserve dependent component, " + dep.Xname + "."
	case strings.HasPrefix(errText, "Reservation expired"):
		msg = "Reservation expired for dependency, " + dep.Xname + "."
	case strings.HasPrefix(errText, "Timeout waiting for transition"):
		msg = "Timeout waiting for transition, " + act + ", on dependency, " + dep.Xname + "."
	case strings.HasPrefix(desc, "Failed to apply transition"):
		msg = "Failed to apply transition, " + act + ", to dependency, " + dep.Xname + "."
	default:
		msg = "Failed to confirm transition, " + act + ", to dependency, " + dep.Xname + "."
	}
	f := failed(msg, msg)
	return &f
}
