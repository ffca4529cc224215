package hsm

import "testing"

func TestEnumNormalize(t *testing.T) {
	roles := Roles.With([]string{"Gateway", " ", "compute"})
	tests := []struct {
		name string
		e    Enum
		in   string
		want string
		ok   bool
	}{
		{name: "case folded", e: States, in: "ready", want: StateReady, ok: true},
		{name: "alias", e: Flags, in: "WARN", want: FlagWarning, ok: true},
		{name: "unknown", e: States, in: "Sleeping", ok: false},
		{name: "site role", e: roles, in: "gateway", want: "Gateway", ok: true},
		{name: "builtin kept once", e: roles, in: "Compute", want: "Compute", ok: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.e.Normalize(tt.in)
			if got != tt.want || ok != tt.ok {
				t.Errorf("Normalize(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
	if n := len(roles.Values); n != len(Roles.Values)+1 {
		t.Errorf("With added %d values, want 1", n-len(Roles.Values))
	}
}

func TestSubscriptionMatches(t *testing.T) {
	yes := true
	sub := Subscription{States: []string{"Ready"}, Roles: []string{"Compute"}, Enabled: &yes}
	tests := []struct {
		name string
		scn  SCN
		want bool
	}{
		{name: "state", scn: SCN{State: "ready"}, want: true},
		{name: "role", scn: SCN{Role: "Compute"}, want: true},
		{name: "enabled change", scn: SCN{Enabled: &yes}, want: true},
		{name: "other state", scn: SCN{State: "Off"}, want: false},
		{name: "nothing", scn: SCN{}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sub.Matches(&tt.scn); got != tt.want {
				t.Errorf("Matches = %v, want %v", got, tt.want)
			}
		})
	}
}
