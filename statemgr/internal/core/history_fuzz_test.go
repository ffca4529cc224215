package core_test

import (
	"strings"
	"testing"

	"github.com/hmsuite/hms/statemgr/internal/core"
)

// FuzzAgentOf feeds arbitrary User-Agent headers to AgentOf: what it keeps
// is one short token of printable ASCII, stored as is in the history.
func FuzzAgentOf(f *testing.F) {
	for _, s := range []string{"hbtd", "hbtd/1.2 (linux)", "Go-http-client/1.1", "  pcs  ", "\x00\xff/x", strings.Repeat("a", 100)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ua string) {
		a := core.AgentOf(ua)
		if len(a) > core.MaxAgentLen || strings.ContainsAny(a, " /") {
			t.Fatalf("AgentOf(%q) = %q", ua, a)
		}
		for _, r := range a {
			if r <= ' ' || r > '~' {
				t.Fatalf("AgentOf(%q) = %q holds %q", ua, a, r)
			}
		}
	})
}

func TestAgentOf(t *testing.T) {
	for ua, want := range map[string]string{"hbtd": "hbtd", "hbtd/1.2 (linux)": "hbtd", "Go-http-client/1.1": "Go-http-client",
		"": "", "  pcs  ": "pcs", "a\x00b": "ab", strings.Repeat("x", 70): strings.Repeat("x", 64)} {
		if got := core.AgentOf(ua); got != want {
			t.Errorf("AgentOf(%q) = %q, want %q", ua, got, want)
		}
	}
}
