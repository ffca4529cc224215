package redfishsim

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// action answers POST to an action target, "<resource>/Actions/<Type>.<Name>".
// ComputerSystem.Reset, and Chassis.Reset of a chassis with a PowerState,
// change PowerState; Manager.Reset and Chassis.Reset of a chassis without
// one are accepted without changing anything; any other action is refused.
func (b *BMC) action(w http.ResponseWriter, r *http.Request) {
	owner, name, ok := strings.Cut(r.URL.Path, "/Actions/")
	if !ok || name == "" || strings.Contains(name, "/") {
		writeError(w, http.StatusMethodNotAllowed, "OperationNotAllowed", fmt.Sprintf("POST is not allowed on %s.", r.URL.Path))
		return
	}
	body, ok := readObject(w, r)
	if !ok {
		return
	}
	b.mu.Lock()
	err := b.resetLocked(owner, name, body)
	if rt, ok := body["ResetType"].(string); ok && err == nil {
		if b.resets == nil {
			b.resets = map[string]int{}
		}
		b.resets[rt]++
	}
	b.mu.Unlock()
	if err != nil {
		writeActionError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// actionError is a refused action: the Redfish message and its status.
type actionError struct {
	status    int
	messageID string
	message   string
}

func (e *actionError) Error() string { return e.message }

func writeActionError(w http.ResponseWriter, err error) {
	if ae, ok := err.(*actionError); ok {
		writeError(w, ae.status, ae.messageID, ae.message)
		return
	}
	writeMutationError(w, err)
}

// resetLocked validates a Reset of the resource at owner against the action
// the resource advertises and, for a ComputerSystem, applies it. b.mu is held.
func (b *BMC) resetLocked(owner, name string, body map[string]any) error {
	cur, isXML, found := b.lookupLocked(owner)
	if !found || isXML {
		return &actionError{http.StatusNotFound, "ResourceMissingAtURI", fmt.Sprintf("The resource at the URI %s was not found.", owner)}
	}
	res, err := decodeObject(cur)
	if err != nil {
		return err
	}
	actions, _ := res["Actions"].(map[string]any)
	decl, declared := actions["#"+name].(map[string]any)
	known := name == "ComputerSystem.Reset" || name == "Manager.Reset" || name == "Chassis.Reset"
	if !declared || !known {
		return &actionError{http.StatusBadRequest, "ActionNotSupported", fmt.Sprintf("The action %s is not supported by the resource.", name)}
	}
	rt, present := body["ResetType"]
	resetType, isString := rt.(string)
	if !present && name == "ComputerSystem.Reset" {
		return &actionError{http.StatusBadRequest, "ActionParameterMissing", fmt.Sprintf("The action %s requires the parameter ResetType to be present in the request body.", name)}
	}
	if present && (!isString || !allowed(decl, resetType)) {
		return &actionError{http.StatusBadRequest, "ActionParameterNotSupported", fmt.Sprintf("The parameter ResetType for the action %s is not supported on the target resource.", name)}
	}
	if name == "Manager.Reset" || !present {
		return nil
	}
	if _, powered := res["PowerState"]; name == "Chassis.Reset" && !powered {
		return nil
	}
	return b.applyResetLocked(owner, resetType)
}

// allowed reports whether resetType is one this simulator acts on and, if
// the action lists ResetType@Redfish.AllowableValues, one of those.
func allowed(decl map[string]any, resetType string) bool {
	switch resetType {
	case "On", "ForceOn", "ForceOff", "GracefulShutdown", "GracefulRestart", "ForceRestart",
		"PushPowerButton", "Nmi", "PowerCycle":
	default:
		return false
	}
	list, ok := decl["ResetType@Redfish.AllowableValues"].([]any)
	if !ok {
		return true
	}
	return slices.Contains(list, any(resetType))
}

// nextPowerState is the PowerState after a reset of a system in state cur.
func nextPowerState(resetType string, cur any) string {
	state, _ := cur.(string)
	switch resetType {
	case "ForceOff", "GracefulShutdown":
		return "Off"
	case "PushPowerButton":
		if state == "On" {
			return "Off"
		}
		return "On"
	case "Nmi":
		if state == "" {
			return "On"
		}
		return state
	}
	return "On"
}
