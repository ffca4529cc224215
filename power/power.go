// Package power is the Power Control Service (PCS): it powers components on,
// off and through restarts over Redfish (transitions made of per-component
// tasks), answers their power state from a sampled cache, and fronts both
// with the legacy CAPMC v1 routes. It is wire-compatible with
// hms-power-control (routes with and without /v1) and hms-capmc.
//
// Components, their Redfish endpoints and their reservations come from HSM
// through statemgr/client; BMC credentials come from a credentials file
// (HSM never hands out BMC passwords). Transitions and their tasks persist
// in SQLite, so a restarted daemon resumes the ones in flight.
package power

import (
	"strings"
	"time"
)

// Operation is a transition's operation, spelt as PCS answers it.
type Operation string

// The operations.
const (
	OpOn          Operation = "On"
	OpOff         Operation = "Off"
	OpSoftOff     Operation = "Soft-Off"
	OpSoftRestart Operation = "Soft-Restart"
	OpHardRestart Operation = "Hard-Restart"
	OpInit        Operation = "Init"
	OpForceOff    Operation = "Force-Off"
)

var operations = []Operation{OpOn, OpOff, OpSoftOff, OpSoftRestart, OpHardRestart, OpInit, OpForceOff}

// ParseOperation reads an operation case-insensitively, as PCS does.
func ParseOperation(s string) (Operation, bool) {
	for _, op := range operations {
		if strings.EqualFold(s, string(op)) {
			return op, true
		}
	}
	return "", false
}

// Transition statuses.
const (
	TransitionNew           = "new"
	TransitionInProgress    = "in-progress"
	TransitionCompleted     = "completed"
	TransitionAborted       = "aborted"
	TransitionAbortSignaled = "abort-signaled"
)

// Task statuses.
const (
	TaskNew         = "new"
	TaskInProgress  = "in-progress"
	TaskFailed      = "failed"
	TaskSucceeded   = "succeeded"
	TaskUnsupported = "unsupported"
)

// Transition is one request to change the power of a set of components.
type Transition struct {
	ID        string
	Operation Operation
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
	return t.Status == TaskFailed || t.Status == TaskSucceeded || t.Status == TaskUnsupported
}

// TaskCounts is the taskCounts object.
type TaskCounts struct {
	Total       int `json:"total"`
	New         int `json:"new"`
	InProgress  int `json:"in-progress"`
	Failed      int `json:"failed"`
	Succeeded   int `json:"succeeded"`
	Unsupported int `json:"un-supported"`
}

func countTasks(tasks []*Task) TaskCounts {
	c := TaskCounts{Total: len(tasks)}
	for _, t := range tasks {
		switch t.Status {
		case TaskNew:
			c.New++
		case TaskInProgress:
			c.InProgress++
		case TaskFailed:
			c.Failed++
		case TaskSucceeded:
			c.Succeeded++
		case TaskUnsupported:
			c.Unsupported++
		}
	}
	return c
}

// Power states and management states of /power-status.
const (
	PowerOn         = "on"
	PowerOff        = "off"
	PowerUndefined  = "undefined"
	MgmtAvailable   = "available"
	MgmtUnavailable = "unavailable"
)
