package main

import (
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/cli"
)

func TestRunRejectsBadFlags(t *testing.T) {
	db := filepath.Join(t.TempDir(), "hmnfd.db")
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{name: "batch", args: []string{"-batch-max", "0"}, want: "batch-max"},
		{name: "retention", args: []string{"-retention-count", "0"}, want: "retention"},
		{name: "dead letter age", env: map[string]string{"HMS_HMNFD_DEADLETTER_AGE": "0s"}, want: "deadletter-age"},
		{name: "retry", args: []string{"-retry-min", "10s", "-retry-max", "1s"}, want: "retry-min"},
		{name: "listen", args: []string{"-listen", "nope"}, want: "HOST:PORT"},
		{name: "hsm url", args: []string{"-hsm-url", "ftp://hsm"}, want: "http"},
		{name: "env twin", env: map[string]string{"HMS_HMNFD_MAX_INFLIGHT": "x"}, want: "HMS_HMNFD_MAX_INFLIGHT"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(k string) string { return tc.env[k] }
			err := run(t.Context(), append([]string{"-db", db}, tc.args...), getenv, io.Discard)
			var ue *cli.UsageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run(%v) = %v, want a usage error mentioning %q", tc.args, err, tc.want)
			}
		})
	}
}
