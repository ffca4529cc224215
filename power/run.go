package power

import (
	"context"
	"sync"

	"github.com/hmsuite/hms/power/pcs"
)

// run is a transition in memory: the Service's view of it, shared by its
// tasks' goroutines and the API. mu guards the transition's status and its
// tasks.
type run struct {
	mu    sync.Mutex
	tr    *Transition
	dirty map[*Task]struct{}

	abortOnce sync.Once
	abort     chan struct{} // closed by DELETE
	done      chan struct{} // closed when the transition has ended
	emit      func(Event)   // the Service's, called without mu held
}

func newRun(tr *Transition, emit func(Event)) *run {
	r := &run{tr: tr, dirty: map[*Task]struct{}{}, abort: make(chan struct{}), done: make(chan struct{}), emit: emit}
	if tr.Status == pcs.TransitionAborted || tr.Status == pcs.TransitionCompleted {
		close(r.done)
	}
	if tr.Status == pcs.TransitionAbortSignaled || tr.Status == pcs.TransitionAborted {
		r.abortOnce.Do(func() { close(r.abort) })
	}
	return r
}

func (r *run) aborting() bool {
	select {
	case <-r.abort:
		return true
	default:
		return false
	}
}

// signalAbort marks the transition abort-signaled; it reports false for
// a completed one.
func (r *run) signalAbort() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch r.tr.Status {
	case pcs.TransitionCompleted:
		return false
	case pcs.TransitionAborted:
		return true
	}
	r.tr.Status = pcs.TransitionAbortSignaled
	r.abortOnce.Do(func() { close(r.abort) })
	return true
}

func (r *run) update(t *Task, desc string) {
	r.mu.Lock()
	t.Status, t.Description = pcs.TaskInProgress, desc
	r.dirty[t] = struct{}{}
	r.mu.Unlock()
	r.emit(Event{Kind: EventTask, ID: r.tr.ID, Xname: t.Xname, Status: pcs.TaskInProgress, Description: desc})
}

func (r *run) advance(t *Task, step int) {
	r.mu.Lock()
	t.Step = step
	r.dirty[t] = struct{}{}
	r.mu.Unlock()
}

func (r *run) desc(t *Task) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return t.Description
}

func (r *run) finish(t *Task, o outcome) {
	r.mu.Lock()
	t.Status, t.Description, t.Error = o.status, o.desc, o.err
	r.dirty[t] = struct{}{}
	r.mu.Unlock()
	r.emit(Event{Kind: EventTask, ID: r.tr.ID, Xname: t.Xname, Status: o.status, Description: o.desc})
}

func (r *run) setResvKey(t *Task, key string) {
	r.mu.Lock()
	t.ResvKey = key
	r.dirty[t] = struct{}{}
	r.mu.Unlock()
}

// takeDirty returns snapshots of the tasks changed since the last call,
// and the transition's status.
func (r *run) takeDirty() (string, []Task) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Task, 0, len(r.dirty))
	for t := range r.dirty {
		out = append(out, *t)
	}
	clear(r.dirty)
	return r.tr.Status, out
}

// snapshot copies the transition and, if withTasks, its tasks.
func (r *run) snapshot(withTasks bool) Transition {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := *r.tr
	c.Tasks = nil
	if withTasks {
		c.Tasks = make([]*Task, len(r.tr.Tasks))
		for i, t := range r.tr.Tasks {
			cp := *t
			c.Tasks[i] = &cp
		}
	}
	return c
}

func (r *run) counts() pcs.TaskCounts {
	r.mu.Lock()
	defer r.mu.Unlock()
	return countTasks(r.tr.Tasks)
}

// pending lists the tasks not yet finished.
func (r *run) pending() []*Task {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*Task
	for _, t := range r.tr.Tasks {
		if !t.final() {
			out = append(out, t)
		}
	}
	return out
}

// succeeded lists the components of the tasks that succeeded.
func (r *run) succeeded() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, t := range r.tr.Tasks {
		if t.Status == pcs.TaskSucceeded {
			out = append(out, t.Xname)
		}
	}
	return out
}

// wait blocks until the transition has ended or ctx ends.
func (r *run) wait(ctx context.Context) error {
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
