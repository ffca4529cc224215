package redfishsim

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/internal/testpeer"
)

// TestRedfishtool cross-checks the simulator with DMTF's redfishtool, a
// client nobody on this project wrote: list systems and reset one, then read
// the simulator's PowerState. Few invocations: redfishtool starts slowly.
func TestRedfishtool(t *testing.T) {
	tool := testpeer.Require(t, "redfishtool")
	tlsConf, err := NewTLSConfig()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		tls     bool
		secure  string // redfishtool -S: when to use https
		auth    string // redfishtool -A
		tree    *Tree
		system  string
		wantIDs []string
	}{
		{name: "http basic, generated", secure: "Never", auth: "Basic", tree: Template(2), system: "Node1", wantIDs: []string{"Node0", "Node1"}},
		{name: "https session, rackmount1", tls: true, secure: "Always", auth: "Session", tree: mockup(t, "public-rackmount1"), system: "437XR1138R2", wantIDs: []string{"437XR1138R2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // redfishtool starts slowly; the BMCs are independent
			cfg := FleetConfig{Count: 1, Listen: "127.0.0.1:0", Tree: tt.tree, User: testUser, Password: testPass}
			if tt.tls {
				cfg.TLS = tlsConf
			}
			m := runFleet(t, cfg).Members()[0]
			rft := func(args ...string) []byte {
				t.Helper()
				base := []string{"-r", m.Addr, "-S", tt.secure, "-A", tt.auth, "-u", testUser, "-p", testPass, "-T", "60"} // generous: redfishtool is slow on a loaded machine
				out, err := exec.CommandContext(t.Context(), tool, append(base, args...)...).CombinedOutput()
				if err != nil {
					t.Fatalf("redfishtool %s: %v\n%s", strings.Join(args, " "), err, out)
				}
				return out
			}
			var list struct{ Members []struct{ Id string } }
			if err := json.Unmarshal(rft("Systems", "list"), &list); err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, s := range list.Members {
				ids = append(ids, s.Id)
			}
			if diff := cmp.Diff(tt.wantIDs, ids); diff != "" {
				t.Fatalf("Systems list (-want +got):\n%s", diff)
			}
			rft("Systems", "-I", tt.system, "reset", "ForceOff")
			var got struct{ PowerState string }
			body, _, _ := m.BMC.lookup(Root + "/Systems/" + tt.system)
			if err := json.Unmarshal(body, &got); err != nil || got.PowerState != "Off" {
				t.Fatalf("simulator PowerState after redfishtool ForceOff = %q (%v), want Off", got.PowerState, err)
			}
		})
	}
}

func TestRedfishtoolWrongPassword(t *testing.T) {
	tool := testpeer.Require(t, "redfishtool")
	m := runFleet(t, FleetConfig{Count: 1, Listen: "127.0.0.1:0", Tree: Template(1), User: testUser, Password: testPass}).Members()[0]
	out, err := exec.CommandContext(t.Context(), tool, "-r", m.Addr, "-S", "Never", "-T", "60", "-u", testUser, "-p", "wrong", "Systems", "list").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "401") {
		t.Fatalf("redfishtool with a wrong password: err %v, output %s; want a failure naming 401", err, out)
	}
}
