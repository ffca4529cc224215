package component

import "github.com/hmsuite/hms/statemgr/hsm"

// startStates maps a target state to the current states it may be entered
// from without Force, as the shipped HMS code (hmsValidStartStatesMap) has it.
// Unknown, Empty and Populated have no entry: only Force (or discovery, which
// always forces) may set them.
var startStates = map[string][]string{
	hsm.StateOff:     {hsm.StateOff, hsm.StateOn, hsm.StateStandby, hsm.StateHalt, hsm.StateReady},
	hsm.StateOn:      {hsm.StateOn, hsm.StateOff, hsm.StateStandby, hsm.StateHalt},
	hsm.StateStandby: {hsm.StateStandby, hsm.StateReady},
	hsm.StateHalt:    {hsm.StateHalt, hsm.StateReady},
	hsm.StateReady:   {hsm.StateReady, hsm.StateOn, hsm.StateOff, hsm.StateStandby, hsm.StateHalt},
}

// transitionAllowed reports whether a component in state from may move to
// state to without Force.
func transitionAllowed(from, to string) bool {
	for _, s := range startStates[to] {
		if s == from {
			return true
		}
	}
	return false
}

// StateUpdate is a StateData PATCH: the target State, an optional Flag (empty
// means OK) and Force.
type StateUpdate struct {
	State string
	Flag  string
	Force bool
}

// Apply returns the State and Flag a component in (state, flag) ends up with
// After u, and whether u applies at all. The rules, in order:
//   - without Force, a transition the table does not allow is skipped;
//   - {Ready, Warning} only applies to a component that is already Ready, so a
//     late heartbeat warning cannot bring an Off node back to Ready;
//   - the Flag becomes u.Flag, or OK when u gives none, except that a Locked
//     flag is never changed by a state update.
//
// A component whose State and Flag would not change reports ok=false too, so
// callers emit SCNs only for components that really changed.
func (u StateUpdate) Apply(state, flag string) (newState, newFlag string, ok bool) {
	if !u.Force && !transitionAllowed(state, u.State) {
		return state, flag, false
	}
	if u.State == hsm.StateReady && u.Flag == hsm.FlagWarning && state != hsm.StateReady {
		return state, flag, false
	}
	newFlag = u.Flag
	if newFlag == "" {
		newFlag = hsm.FlagOK
	}
	if flag == hsm.FlagLocked {
		newFlag = hsm.FlagLocked
	}
	if u.State == state && newFlag == flag {
		return state, flag, false
	}
	return u.State, newFlag, true
}
