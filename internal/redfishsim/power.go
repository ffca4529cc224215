package redfishsim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// pendingPower is a PowerState a reset will reach once PowerDelay has passed.
type pendingPower struct {
	state string
	due   time.Time
}

// settleLocked applies a pending power change of the resource at p that is
// due. b.mu is held.
func (b *BMC) settleLocked(p string) {
	pp, ok := b.pending[p]
	if !ok || time.Now().Before(pp.due) {
		return
	}
	delete(b.pending, p)
	_ = b.setPowerLocked(p, func(any) string { return pp.state })
}

// setPowerLocked sets the PowerState of the system at p to next(current)
// and tells OnPower when it changed. b.mu is held.
func (b *BMC) setPowerLocked(p string, next func(cur any) string) error {
	var old, state string
	err := b.modifyLocked(p, func(m map[string]any) error {
		old, _ = m["PowerState"].(string)
		state = next(m["PowerState"])
		m["PowerState"] = state
		return nil
	})
	if err == nil && state != old && b.onPower != nil {
		b.onPower(p, state)
	}
	return err
}

// Reset applies a ComputerSystem.Reset of resetType to the system at path
// (such as "/redfish/v1/Systems/Node0") as if a client had posted it, without
// credentials: the simulator's own power button (hms sim power on|off).
func (b *BMC) Reset(system, resetType string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.resetLocked(Canonical(system), "ComputerSystem.Reset", map[string]any{"ResetType": resetType})
}

// applyResetLocked changes the system's PowerState as resetType does, now
// or after Faults.PowerDelay; with Faults.IgnoreGraceful a graceful reset
// is accepted and nothing happens (an OS that ignores the ACPI request).
func (b *BMC) applyResetLocked(owner, resetType string) error {
	f := b.faults.Load()
	if f.IgnoreGraceful && (resetType == "GracefulShutdown" || resetType == "GracefulRestart") {
		return nil
	}
	if f.PowerDelay > 0 {
		body, _, _ := b.lookupLocked(owner)
		var cur struct{ PowerState any }
		_ = json.Unmarshal(body, &cur)
		if b.pending == nil {
			b.pending = map[string]pendingPower{}
		}
		b.pending[owner] = pendingPower{state: nextPowerState(resetType, cur.PowerState), due: time.Now().Add(f.PowerDelay)}
		return nil
	}
	return b.setPowerLocked(owner, func(cur any) string { return nextPowerState(resetType, cur) })
}

// allowableKey is the annotation OmitAllowableValues hides.
var allowableKey = []byte(`"ResetType@Redfish.AllowableValues"`)

// omitAllowable removes ResetType@Redfish.AllowableValues from the actions
// of a resource body, as some BMCs (Gigabyte) intermittently do.
func omitAllowable(body []byte) []byte {
	if !bytes.Contains(body, allowableKey) {
		return body
	}
	m, err := decodeObject(body)
	if err != nil {
		return body
	}
	actions, _ := m["Actions"].(map[string]any)
	for _, a := range actions {
		if decl, ok := a.(map[string]any); ok {
			delete(decl, "ResetType@Redfish.AllowableValues")
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		return body
	}
	return out
}

// Power limits of the systems of TemplatePower, in watts.
const (
	PowerCapMin      = 350
	PowerCapMax      = 850
	PowerCapCapacity = 900
	PowerupWatts     = 250
)

// TemplatePower is Template with power capping: the chassis links a Power
// resource whose PowerControl has one "Node Power Control" per system
// (RelatedItem: the system), PowerLimit.LimitInWatts unset, and the limits
// as Cray BMCs give them (Oem.Cray.PowerLimit Min and Max,
// Oem.Cray.PowerResetWatts). A PATCH of the resource sets the limits; the
// simulator does not check them.
func TemplatePower(systems int) *Tree {
	t := Template(systems)
	g := gen{t: t}
	ch := g.enclosure(max(systems, 1))
	ch["Power"] = link("/Chassis/Enclosure/Power")
	g.put("/Chassis/Enclosure", "#Chassis.v1_9_0.Chassis", ch)
	var controls []any
	for i := range max(systems, 1) {
		controls = append(controls, obj{
			"@odata.id": Root + fmt.Sprintf("/Chassis/Enclosure/Power#/PowerControl/%d", i),
			"MemberId":  fmt.Sprint(i), "Name": "Node Power Control",
			"PowerCapacityWatts": PowerCapCapacity, "PowerConsumedWatts": PowerupWatts,
			"PowerLimit":  obj{"LimitInWatts": nil, "LimitException": "LogEventOnly"},
			"RelatedItem": []any{link(fmt.Sprintf("/Systems/Node%d", i))},
			"Oem":         obj{"Cray": obj{"PowerLimit": obj{"Min": PowerCapMin, "Max": PowerCapMax}, "PowerResetWatts": PowerupWatts}},
		})
	}
	g.put("/Chassis/Enclosure/Power", "#Power.v1_5_0.Power", obj{"Id": "Power", "Name": "Power", "PowerControl": controls})
	return t
}
