package power

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/hmsuite/hms/power/pcs"
)

// step is one Redfish reset of an operation's sequence.
type step struct {
	reset string // ResetType sent
	want  string // power state that confirms it
	// graceful: if the BMC does not support it, refuses it, or the
	// component does not reach want within the graceful share of the
	// deadline, the next (forced) step follows.
	graceful bool
	// always: sent even when the component is already in want (restarts).
	always bool
	// alt is sent instead when reset is not supported.
	alt string
}

// act is the step's name in task texts ("gracefulshutdown").
func (s step) act() string { return strings.ToLower(s.reset) }

var (
	planOn       = []step{{reset: "On", want: pcs.PowerOn}}
	planOff      = []step{{reset: "GracefulShutdown", want: pcs.PowerOff, graceful: true}, {reset: "ForceOff", want: pcs.PowerOff}}
	planSoftOff  = []step{{reset: "GracefulShutdown", want: pcs.PowerOff}}
	planForceOff = []step{{reset: "ForceOff", want: pcs.PowerOff}}
	planRestart  = []step{{reset: "GracefulRestart", want: pcs.PowerOn, always: true, alt: "ForceRestart"}}
	// planCycle is hard-restart's and init's: off (graceful, then forced)
	// and on again. A step whose state is already reached is skipped, so
	// init of an off component only sends On.
	planCycle = []step{{reset: "GracefulShutdown", want: pcs.PowerOff, graceful: true}, {reset: "ForceOff", want: pcs.PowerOff}, {reset: "On", want: pcs.PowerOn}}
)

// plan is the Redfish sequence of op (hms-behavior.md section 11). A
// soft-restart on a BMC without GracefulRestart or ForceRestart cycles the
// power instead.
func plan(op pcs.Operation, allowed []string) []step {
	switch op {
	case pcs.OpOn:
		return planOn
	case pcs.OpOff:
		return planOff
	case pcs.OpSoftOff:
		return planSoftOff
	case pcs.OpForceOff:
		return planForceOff
	case pcs.OpSoftRestart:
		if slices.Contains(allowed, "GracefulRestart") || slices.Contains(allowed, "ForceRestart") {
			return planRestart
		}
	}
	return planCycle
}

// taskRun is one task being carried out.
type taskRun struct {
	s        *Service
	r        *run
	t        *Task
	deadline time.Time // zero: wait forever is not offered; see Create
	ord      *order    // parent/child links of the transition (nil: none)
}

// outcome is how a task ended, as its status, description and error.
type outcome struct{ status, desc, err string }

func failed(desc, err string) outcome { return outcome{pcs.TaskFailed, desc, err} }

// execute carries the task out and records its outcome. It returns with
// the task unfinished only when ctx ends without an abort (the daemon
// stops), so a restart resumes it.
func (tr *taskRun) execute(ctx context.Context) {
	start := time.Now()
	o, done := tr.sequence(ctx)
	if !done {
		return
	}
	if tr.r.aborting() && o.status != pcs.TaskSucceeded {
		o = failed("Aborted. Last status - "+tr.r.desc(tr.t), "Transition aborted")
	}
	tr.r.finish(tr.t, o)
	if o.status == pcs.TaskSucceeded {
		tr.s.reports.add(tr.t.Xname)
	}
	if tr.ord != nil {
		tr.ord.gates[tr.t].end()
	}
	op := string(tr.r.tr.Operation)
	tr.s.m.tasks.WithLabelValues(op, o.status).Inc()
	tr.s.m.taskTime.WithLabelValues(op, o.status).Observe(time.Since(start).Seconds())
}

func (tr *taskRun) sequence(ctx context.Context) (outcome, bool) {
	r, t, op := tr.r, tr.t, tr.r.tr.Operation
	r.update(t, "Gathering data")
	tgt, err := tr.s.targets.lookup(ctx, t.Xname)
	if err != nil {
		return failed("Failed to achieve transition", "Missing xname: "+err.Error()), ctx.Err() == nil || r.aborting()
	}
	res, err := tr.s.bmc.read(ctx, tgt)
	if err != nil {
		if ctx.Err() != nil && !r.aborting() {
			return outcome{}, false
		}
		return failed("Failed to achieve transition", "Unable to read power state: "+err.Error()), true
	}
	cur := powerOf(res.PowerState)
	tr.s.cache.observe(t.Xname, cur, nil)
	if t.Step == 0 && (op == pcs.OpSoftRestart || op == pcs.OpHardRestart) && cur != pcs.PowerOn {
		return failed("Component must be in the On state for "+string(op), "Component is in the wrong power state"), true
	}
	live := res.reset()
	allowed := tr.s.targets.allowed(ctx, tgt, live)
	uri := tgt.ResetURI
	if uri == "" && live != nil {
		uri = live.Target
	}
	if uri == "" {
		return tr.unsupported(), true
	}
	steps := plan(op, allowed)
	if op == pcs.OpSoftRestart && tr.ord.hasParents(t) {
		// Its parent is power-cycled: a graceful restart of its own would
		// be cut short, so it goes off before its parent and on after it.
		steps = planCycle
	}
	return tr.steps(ctx, tgt, uri, cur, steps, allowed)
}

// steps sends the plan's resets from the task's Step on, confirming each.
func (tr *taskRun) steps(ctx context.Context, tgt Target, uri, cur string, steps []step, allowed []string) (outcome, bool) {
	r, t := tr.r, tr.t
	last, cur, o, end := tr.resume(ctx, tgt, cur, steps)
	if end {
		return o, o.status != "" || r.aborting()
	}
	offGated, onGated := sentBefore(steps, t.Step)
	for i := t.Step; i < len(steps); i++ {
		s := steps[i]
		if s.want == pcs.PowerOn && tr.ord != nil {
			tr.ord.gates[t].passOff()
		}
		if !s.always && cur == s.want {
			continue
		}
		rt, skip, unsupported := s.resetType(allowed)
		switch {
		case unsupported:
			return tr.unsupported(), true
		case skip:
			continue
		}
		act := strings.ToLower(rt)
		if o, stop := tr.gate(ctx, s.want, act, last, &offGated, &onGated); stop || o != nil {
			if stop {
				return outcome{}, r.aborting()
			}
			return *o, true
		}
		if r.aborting() || ctx.Err() != nil {
			return outcome{}, r.aborting()
		}
		r.update(t, "Applying transition, "+act)
		if err := tr.s.bmc.reset(ctx, tgt, uri, rt); err != nil {
			if ctx.Err() != nil && !r.aborting() {
				return outcome{}, false
			}
			if errors.Is(err, errRefused) {
				tr.s.targets.refuse(tgt, rt)
				if s.graceful {
					continue
				}
			}
			return failed("Failed to apply transition, "+act, err.Error()), true
		}
		r.advance(t, i+1)
		last = act
		if r.tr.Deadline == 0 {
			continue
		}
		reached, o, done := tr.confirmStep(ctx, tgt, s, act)
		if done {
			return o, o.status != "" || r.aborting()
		}
		if reached {
			cur = s.want
		}
	}
	return tr.succeeded(last), true
}

// resetType is the reset the step sends given the ResetTypes the target
// allows: its own, else its alternative. Without either a graceful step is
// skipped and any other leaves the operation unsupported.
func (s step) resetType(allowed []string) (rt string, skip, unsupported bool) {
	switch {
	case slices.Contains(allowed, s.reset):
		return s.reset, false, false
	case s.alt != "" && slices.Contains(allowed, s.alt):
		return s.alt, false, false
	case s.graceful:
		return "", true, false
	}
	return "", false, true
}

func (tr *taskRun) unsupported() outcome {
	return outcome{pcs.TaskUnsupported, "Component does not support the specified transition operation, " + string(tr.r.tr.Operation),
		"Unsupported for transition operation"}
}

// confirmStep waits for the power state a sent step wants: a graceful step
// gets half the time left, and falls through to the next step when it is
// not reached. done reports that the task ends with o (o empty: ctx ended).
func (tr *taskRun) confirmStep(ctx context.Context, tgt Target, s step, act string) (reached bool, o outcome, done bool) {
	tr.r.update(tr.t, "Confirming successful transition, "+act)
	until := tr.deadline
	if s.graceful {
		now := tr.s.cfg.Now()
		until = now.Add(tr.deadline.Sub(now) / 2)
	}
	ok, stop := tr.confirm(ctx, tgt, s.want, until)
	switch {
	case stop:
		return false, outcome{}, true
	case !ok && !s.graceful:
		return false, failed("Failed to achieve transition", "Timeout waiting for transition, "+act+"."), true
	}
	return ok, outcome{}, false
}

// succeeded is the outcome of a task whose steps all went through; last is
// the last reset it sent ("" when none was needed).
func (tr *taskRun) succeeded(last string) outcome {
	switch {
	case last == "":
		return outcome{pcs.TaskSucceeded, "Component already in desired state", ""}
	case tr.r.tr.Deadline == 0:
		return outcome{pcs.TaskSucceeded, "Transition applied, " + last + ". Not confirming.", ""}
	}
	return outcome{pcs.TaskSucceeded, "Transition confirmed, " + last, ""}
}

// resume confirms, for a task resumed after a restart, the step it sent
// last. end reports that the task ends with o (o empty: ctx ended).
func (tr *taskRun) resume(ctx context.Context, tgt Target, cur string, steps []step) (last, now string, o outcome, end bool) {
	r, t := tr.r, tr.t
	if t.Step == 0 || t.Step > len(steps) {
		return "", cur, outcome{}, false
	}
	s := steps[t.Step-1]
	last = s.act()
	if cur == s.want || r.tr.Deadline == 0 {
		return last, cur, outcome{}, false
	}
	r.update(t, "Confirming successful transition, "+last)
	ok, stop := tr.confirm(ctx, tgt, s.want, tr.deadline)
	switch {
	case stop:
		return last, cur, outcome{}, true
	case ok:
		return last, s.want, outcome{}, false
	case !s.graceful:
		return last, cur, failed("Failed to achieve transition", "Timeout waiting for transition, "+last+"."), true
	}
	return last, cur, outcome{}, false
}

// sentBefore reports whether steps before step n (those already sent)
// include an off step and an on step: their ordering waits are behind.
func sentBefore(steps []step, n int) (off, on bool) {
	for _, s := range steps[:min(n, len(steps))] {
		off = off || s.want == pcs.PowerOff
		on = on || s.want == pcs.PowerOn
	}
	return off, on
}

// gate waits, before the first off step, for the task's children to be
// off and, before the first on step, for its parents to be on (see
// order.go). It returns the outcome of a task whose dependency failed, or
// stop when ctx ended first.
func (tr *taskRun) gate(ctx context.Context, want, act, last string, offGated, onGated *bool) (*outcome, bool) {
	if tr.ord == nil {
		return nil, false
	}
	switch {
	case want == pcs.PowerOff && !*offGated:
		*offGated = true
		return tr.ord.afterChildren(ctx, tr.t, act)
	case want == pcs.PowerOn && !*onGated:
		*onGated = true
		if !tr.ord.hasParents(tr.t) {
			return nil, false
		}
		switch {
		case tr.r.tr.Operation == pcs.OpSoftRestart:
			tr.r.update(tr.t, "Component will be reset as a result of its parent component getting powered off->on.")
		case last != "":
			tr.r.update(tr.t, "Transition applied, "+last+". Waiting for next transition.")
		}
		return tr.ord.afterParents(ctx, tr.t, act)
	}
	return nil, false
}

// confirm reads the power state back until it is want or until passes.
// stop reports that ctx ended first.
func (tr *taskRun) confirm(ctx context.Context, tgt Target, want string, until time.Time) (ok, stop bool) {
	for {
		if res, err := tr.s.bmc.read(ctx, tgt); err == nil {
			got := powerOf(res.PowerState)
			tr.s.cache.observe(tr.t.Xname, got, nil)
			if got == want {
				return true, false
			}
		}
		if ctx.Err() != nil {
			return false, true
		}
		if !tr.s.cfg.Now().Add(tr.s.cfg.Poll).Before(until) {
			return false, false
		}
		select {
		case <-ctx.Done():
			return false, true
		case <-tr.s.cfg.After(tr.s.cfg.Poll):
		}
	}
}
