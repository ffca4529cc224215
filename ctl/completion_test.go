package ctl_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hmsuite/hms/ctl"
)

// TestCompletion: the bash script completes command words, subcommands
// (those of the binary's own commands, hms sim's, too) and each command's
// own flags; zsh gets the same through bashcompinit.
func TestCompletion(t *testing.T) {
	e := env(t, nil)
	sim := ctl.Summary{Name: "sim", Words: []string{"list", "power on", "power off", "kill-bmc"}}
	r := hmsWith(t, ctl.Options{Getenv: e, Others: []ctl.Summary{sim}}, "completion", "bash")
	if r.err != nil {
		t.Fatal(r.err)
	}
	script := filepath.Join(t.TempDir(), "hms.bash")
	mustOK(t, os.WriteFile(script, []byte(r.stdout), 0o644))
	tests := []struct {
		line string // the words typed so far; the last one is being completed
		want string
	}{
		{line: "hms st", want: "status"},
		{line: "hms get n", want: "nodes"},
		{line: "hms node r", want: "remove"},
		{line: "hms get nodes -sta", want: "-state"},
		{line: "hms wait -tim", want: "-timeout"},
		{line: "hms node add x3000c0s1b0n0 -swi", want: "-switch-port"},
		{line: "hms completion z", want: "zsh"},
		{line: "hms bos sessionte", want: "sessiontemplates"},
		{line: "hms bos sessions cr", want: "create"},
		{line: "hms bos sessions create -tem", want: "-template"},
		{line: "hms help bo", want: "boot bos"},
		{line: "hms si", want: "sim"},
		{line: "hms sim ki", want: "kill-bmc"},
		{line: "hms sim power o", want: "off on"},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			words := strings.Fields(tt.line)
			prog := "source " + script + "; COMP_WORDS=(" + strings.Join(words, " ") + "); COMP_CWORD=" +
				strconv.Itoa(len(words)-1) + "; _hms; echo \"${COMPREPLY[*]}\""
			out, err := exec.CommandContext(t.Context(), "bash", "--norc", "-c", prog).CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != tt.want {
				t.Errorf("completing %q: %q (%v), want %q", tt.line, out, err, tt.want)
			}
		})
	}
	if z := hms(t, e, "completion", "zsh"); z.err != nil || !strings.HasPrefix(z.stdout, "#compdef hms\n") || !strings.Contains(z.stdout, "bashcompinit") {
		t.Errorf("zsh completion: %v %q", z.err, z.stdout)
	}
	if bad := hms(t, e, "completion", "fish"); bad.code() != 2 {
		t.Errorf("completion fish: code %d, want 2", bad.code())
	}
}
