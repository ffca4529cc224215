package main

import (
	"bytes"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/cli"
)

func TestRunFlags(t *testing.T) {
	dir := t.TempDir()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	// A port that is taken: a flag error must be reported before sls tries to bind.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	tests := []struct {
		name      string
		args      []string
		env       map[string]string
		wantUsage bool
		wantErr   string
		wantOut   string
	}{
		{name: "help lists flags and env twins", args: []string{"-help"}, wantOut: "HMS_SLS_MAX_DUMP_BYTES"},
		{name: "bad dump limit", args: []string{"-listen", ln.Addr().String(), "-max-dump-bytes=0"}, wantUsage: true, wantErr: "must be positive"},
		{name: "bad env value", env: map[string]string{"HMS_SLS_MAX_DUMP_BYTES": "lots"}, wantUsage: true, wantErr: "HMS_SLS_MAX_DUMP_BYTES"},
		{name: "bad listen", args: []string{"-listen", "nowhere"}, wantUsage: true},
		// A taken port is reported like a bad flag (exit 2), before the database is created.
		{name: "port taken", args: []string{"-listen", ln.Addr().String(), "-db", filepath.Join(dir, "a.db")}, wantUsage: true, wantErr: "address already in use"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := run(t.Context(), tt.args, env(tt.env), &out)
			if tt.wantOut != "" {
				if !errors.Is(err, cli.ErrHelp) || !strings.Contains(out.String(), tt.wantOut) {
					t.Fatalf("err %v, output %q; want help mentioning %s", err, out.String(), tt.wantOut)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.wantErr)
			}
			if got := errors.As(err, new(*cli.UsageError)); got != tt.wantUsage {
				t.Errorf("usage error = %v, want %v (%v)", got, tt.wantUsage, err)
			}
			if files, _ := os.ReadDir(dir); len(files) > 0 {
				t.Errorf("a refused start left %s in the data directory", files[0].Name())
			}
		})
	}
}
