// Package pcs holds the Power Control Service's wire types: the JSON bodies
// of the PCS API (transitions, power status) as pcs and its clients read
// and write them. It links no server, database or Redfish library, so the
// CLI and other daemons (BOS) import it through power/client.
package pcs

import (
	"strings"
	"time"
)

// Operation is a transition's operation, spelt as PCS answers it; requests
// may use any case.
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

// Power and management states of /power-status.
const (
	PowerOn         = "on"
	PowerOff        = "off"
	PowerUndefined  = "undefined"
	MgmtAvailable   = "available"
	MgmtUnavailable = "unavailable"
)

// Location is one component of a transition request.
type Location struct {
	Xname     string `json:"xname"`
	DeputyKey string `json:"deputyKey,omitempty"`
}

// TransitionRequest is the body of POST /transitions. A nil Deadline is
// PCS's default (5 minutes).
type TransitionRequest struct {
	Operation string     `json:"operation"`
	Deadline  *int       `json:"taskDeadlineMinutes,omitempty"`
	Location  []Location `json:"location"`
}

// Created answers POST /transitions.
type Created struct {
	TransitionID string    `json:"transitionID"`
	Operation    Operation `json:"operation"`
}

// TaskCounts is a transition's taskCounts.
type TaskCounts struct {
	Total       int `json:"total"`
	New         int `json:"new"`
	InProgress  int `json:"in-progress"`
	Failed      int `json:"failed"`
	Succeeded   int `json:"succeeded"`
	Unsupported int `json:"un-supported"`
}

// Transition is one transition; Tasks only in GET /transitions/{id}.
type Transition struct {
	TransitionID string     `json:"transitionID"`
	Operation    Operation  `json:"operation"`
	Created      time.Time  `json:"createTime"`
	Expires      time.Time  `json:"automaticExpirationTime"`
	Status       string     `json:"transitionStatus"`
	Counts       TaskCounts `json:"taskCounts"`
	Tasks        []Task     `json:"tasks,omitempty"`
}

// Done reports whether the transition has ended.
func (t Transition) Done() bool {
	return t.Status == TransitionCompleted || t.Status == TransitionAborted
}

// TransitionList is the body of GET /transitions.
type TransitionList struct {
	Transitions []Transition `json:"transitions"`
}

// Task is one component's part of a transition.
type Task struct {
	Xname       string `json:"xname"`
	Status      string `json:"taskStatus"`
	Description string `json:"taskStatusDescription"`
	Error       string `json:"error,omitempty"`
}

// PowerStatusRequest is the body of POST /power-status.
type PowerStatusRequest struct {
	Xnames      []string `json:"xname,omitempty"`
	PowerFilter string   `json:"powerStateFilter,omitempty"`
	MgmtFilter  string   `json:"managementStateFilter,omitempty"`
}

// PowerStatus is one component's power status.
type PowerStatus struct {
	Xname       string   `json:"xname"`
	PowerState  string   `json:"powerState"`
	MgmtState   string   `json:"managementState"`
	Error       string   `json:"error"`
	Supported   []string `json:"supportedPowerTransitions"`
	LastUpdated string   `json:"lastUpdated"`
}

// PowerStatusList is the answer of /power-status.
type PowerStatusList struct {
	Status []PowerStatus `json:"status"`
}
