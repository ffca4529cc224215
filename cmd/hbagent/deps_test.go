package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestAgentLinksNoServerLibraries: the agent runs on every node, so it must
// not pull in hbtd's database, bus or metrics libraries (it did once, and
// was a 20 MB binary).
func TestAgentLinksNoServerLibraries(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list dependencies with")
	}
	out, err := exec.CommandContext(t.Context(), gobin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"modernc.org/sqlite", "github.com/segmentio/kafka-go", "github.com/twmb/franz-go", "github.com/prometheus/", "github.com/stmcginnis/gofish"} {
			if strings.HasPrefix(dep, banned) {
				t.Errorf("hbagent depends on %s", dep)
			}
		}
	}
}
