package hsm

import (
	"sort"
	"time"
)

// StateChange is one change of a component's State or Flag as HSM recorded
// it: the suite's extension GET /State/Components/History (shipped HSM keeps
// no such record). Its shape follows HSM's hardware history
// (HWInventoryHistory: ID, Timestamp), with the states before and after.
type StateChange struct {
	ID        string    `json:"ID"`
	Timestamp time.Time `json:"Timestamp"`
	// Seq orders the changes: a later change has a larger Seq; the changes
	// one write made share it (and their Timestamp).
	Seq int64 `json:"Seq"`
	// OldState and OldFlag are empty when the change created the component.
	OldState string `json:"OldState"`
	OldFlag  string `json:"OldFlag"`
	State    string `json:"State"`
	Flag     string `json:"Flag"`
	// Cause is what made the change (CauseAPI, CauseDiscovery, ...), empty
	// when HSM does not know.
	Cause string `json:"Cause,omitempty"`
	// Agent names the API caller when Cause is CauseAPI: its User-Agent,
	// which HMS services set to their name (hbtd, pcs, bos, hms-cli, ...).
	Agent string `json:"Agent,omitempty"`
}

// Causes of a StateChange.
const (
	// CauseAPI is a write through the HSM API (POST, PUT or PATCH of
	// components); Agent says who sent it, hbtd for heartbeats.
	CauseAPI = "API"
	// CauseDiscovery is what a Redfish walk of a BMC found.
	CauseDiscovery = "Discovery"
	// CauseHeartbeatCheck is a node found On by a walk that hbtd says
	// heartbeats, set Ready.
	CauseHeartbeatCheck = "HeartbeatCheck"
	// CauseWatchdog is a Standby node whose BMC reports it powered off.
	CauseWatchdog = "Watchdog"
)

// StateHistory is the history of one component, oldest change first: the
// body of GET /State/Components/History/{xname}, shaped as
// HWInventoryHistoryArray.
type StateHistory struct {
	ID      string        `json:"ID"`
	History []StateChange `json:"History"`
}

// StateHistoryList is the body of GET /State/Components/History: the
// histories by component, in ID order, as HWInventoryHistoryCollection.
type StateHistoryList struct {
	Components []StateHistory `json:"Components"`
}

// Newest returns at most n of the changes in l, newest first (n < 0: all).
func (l StateHistoryList) Newest(n int) []StateChange {
	out := []StateChange{}
	for _, h := range l.Components {
		out = append(out, h.History...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Seq > out[j].Seq })
	if n >= 0 && len(out) > n {
		out = out[:n]
	}
	return out
}
