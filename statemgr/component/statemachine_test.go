package component

import (
	"slices"
	"strings"
	"testing"

	"github.com/hmsuite/hms/statemgr/hsm"
)

// TestStateMachineProperties checks StateUpdate.Apply against the rules of
// HMS section 5.2 for every combination of current state, current flag,
// target state, given flag and Force.
func TestStateMachineProperties(t *testing.T) {
	// The allowed-start table, written out independently of startStates.
	allowed := map[string]string{
		"Off":     "Off On Standby Halt Ready",
		"On":      "On Off Standby Halt",
		"Standby": "Standby Ready",
		"Halt":    "Halt Ready",
		"Ready":   "Ready On Off Standby Halt",
	}
	flags := append([]string{""}, hsm.Flags.Values...)
	n := 0
	for _, from := range hsm.States.Values {
		for _, curFlag := range hsm.Flags.Values {
			for _, to := range hsm.States.Values {
				for _, flag := range flags {
					for _, force := range []bool{false, true} {
						n++
						u := StateUpdate{State: to, Flag: flag, Force: force}
						st, fl, ok := u.Apply(from, curFlag)
						legal := force || slices.Contains(strings.Fields(allowed[to]), from)
						readyWarn := to == "Ready" && flag == "Warning" && from != "Ready"
						wantFlag := flag
						if wantFlag == "" {
							wantFlag = "OK"
						}
						if curFlag == "Locked" {
							wantFlag = "Locked"
						}
						changes := legal && !readyWarn && (to != from || wantFlag != curFlag)
						if ok != changes {
							t.Fatalf("%s/%s -> %+v: ok=%v, want %v", from, curFlag, u, ok, changes)
						}
						if !ok && (st != from || fl != curFlag) {
							t.Fatalf("%s/%s -> %+v: skipped update changed values to %s/%s", from, curFlag, u, st, fl)
						}
						if ok && (st != to || fl != wantFlag) {
							t.Fatalf("%s/%s -> %+v: got %s/%s, want %s/%s", from, curFlag, u, st, fl, to, wantFlag)
						}
					}
				}
			}
		}
	}
	if n != 8*5*8*6*2 {
		t.Fatalf("checked %d combinations", n)
	}
}

func TestStateMachineNamedCases(t *testing.T) {
	tests := []struct {
		name           string
		from, curFlag  string
		u              StateUpdate
		wantSt, wantFl string
		wantOK         bool
	}{
		{name: "power-on does not demote Ready", from: "Ready", curFlag: "OK", u: StateUpdate{State: "On"}, wantSt: "Ready", wantFl: "OK"},
		{name: "late heartbeat warning leaves Off", from: "Off", curFlag: "OK", u: StateUpdate{State: "Ready", Flag: "Warning"}, wantSt: "Off", wantFl: "OK"},
		{name: "warning on Ready", from: "Ready", curFlag: "OK", u: StateUpdate{State: "Ready", Flag: "Warning"}, wantSt: "Ready", wantFl: "Warning", wantOK: true},
		{name: "flag resets to OK", from: "On", curFlag: "Alert", u: StateUpdate{State: "Ready"}, wantSt: "Ready", wantFl: "OK", wantOK: true},
		{name: "locked flag kept", from: "On", curFlag: "Locked", u: StateUpdate{State: "Ready", Flag: "Alert"}, wantSt: "Ready", wantFl: "Locked", wantOK: true},
		{name: "Empty needs force", from: "Off", curFlag: "OK", u: StateUpdate{State: "Empty"}, wantSt: "Off", wantFl: "OK"},
		{name: "forced Empty", from: "Off", curFlag: "OK", u: StateUpdate{State: "Empty", Force: true}, wantSt: "Empty", wantFl: "OK", wantOK: true},
		{name: "Unknown to Ready needs force", from: "Unknown", curFlag: "OK", u: StateUpdate{State: "Ready"}, wantSt: "Unknown", wantFl: "OK"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, fl, ok := tc.u.Apply(tc.from, tc.curFlag)
			if st != tc.wantSt || fl != tc.wantFl || ok != tc.wantOK {
				t.Errorf("Apply = %s/%s/%v, want %s/%s/%v", st, fl, ok, tc.wantSt, tc.wantFl, tc.wantOK)
			}
		})
	}
}
