// Package power is the Power Control Service (PCS): it powers components on,
// off and through restarts over Redfish (transitions made of per-component
// tasks), answers their power state from a sampled cache, and fronts both
// with the legacy CAPMC v1 routes. It is wire-compatible with
// hms-power-control (routes with and without /v1) and hms-capmc.
//
// Components, their Redfish endpoints, their reservations and the BMC
// logins (through HSM's admin-only credentials route, a credentials file
// overriding them) come from HSM through statemgr/client. Transitions and
// their tasks persist in SQLite, so a restarted daemon resumes the ones in
// flight.
package power

import (
	"time"

	"github.com/hmsuite/hms/power/pcs"
)

// Transition is one request to change the power of a set of components.
type Transition struct {
	ID        string
	Operation pcs.Operation
	Created   time.Time
	Expires   time.Time
	Status    string
	// Deadline is taskDeadlineMinutes: 0 applies without confirming.
	Deadline int
	Tasks    []*Task
}

// Task is the part of a transition that concerns one component.
type Task struct {
	Xname       string
	DeputyKey   string
	Status      string
	Description string
	Error       string
	// Step is how far the Redfish sequence got (0: nothing sent), so a
	// restarted daemon resumes a task rather than starting it over.
	Step int
	// ResvKey is the key of the HSM reservation pcs holds for the task
	// (empty when the caller's deputy key covers it).
	ResvKey string
}

func (t *Task) final() bool {
	return t.Status == pcs.TaskFailed || t.Status == pcs.TaskSucceeded || t.Status == pcs.TaskUnsupported
}

func countTasks(tasks []*Task) pcs.TaskCounts {
	c := pcs.TaskCounts{Total: len(tasks)}
	for _, t := range tasks {
		switch t.Status {
		case pcs.TaskNew:
			c.New++
		case pcs.TaskInProgress:
			c.InProgress++
		case pcs.TaskFailed:
			c.Failed++
		case pcs.TaskSucceeded:
			c.Succeeded++
		case pcs.TaskUnsupported:
			c.Unsupported++
		}
	}
	return c
}
