package main

import (
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/cli"
)

// TestTimerFlagsRefusedBeforeListening: the timer flags are checked by the
// same function as PATCH /params, and a bad one stops hbtd before any port is
// bound or database created.
func TestTimerFlagsRefusedBeforeListening(t *testing.T) {
	db := filepath.Join(t.TempDir(), "hb.db")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{args: []string{"-warntime", "40"}, want: "Warntime: 40 must be less than Errtime 30"},
		{args: []string{"-errtime", "3000000"}, want: "Errtime: 3000000 seconds: want more than 0 and at most 2592000"},
		{args: []string{"-interval", "0.0000000001"}, want: "Interval: 0 seconds"},
	} {
		args := append([]string{"-listen", "127.0.0.1:0", "-db", db}, tc.args...)
		err := run(t.Context(), args, func(string) string { return "" }, io.Discard)
		if !errors.As(err, new(*cli.UsageError)) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run(%q) = %v, want a usage error containing %q", tc.args, err, tc.want)
		}
	}
	if m, _ := filepath.Glob(db + "*"); len(m) > 0 {
		t.Errorf("refused flags created %v", m)
	}
}
