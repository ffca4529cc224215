package main

import (
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/cli"
)

// TestRefusedBeforeAnyFile: bad flag values, a missing file and a taken port
// are usage errors (exit 2) found before the database or the key is created.
func TestRefusedBeforeAnyFile(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "port taken", args: []string{"-listen", ln.Addr().String()}, want: "address already in use"},
		{name: "negative workers", args: []string{"-discovery-workers", "-1"}, want: "at least 1"},
		{name: "zero workers", args: []string{"-discovery-workers", "0"}, want: "at least 1"},
		{name: "missing hms config", args: []string{"-hms-config", "/nonexistent"}, want: "-hms-config"},
		{name: "missing CA bundle", args: []string{"-bmc-ca-bundle", "/nonexistent"}, want: "-bmc-ca-bundle"},
		{name: "bad bool", args: []string{"-bmc-http=yes please"}, want: "true or false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"-listen", "127.0.0.1:0", "-db", filepath.Join(dir, "hsm.db"),
				"-cred-key-file", filepath.Join(dir, "k")}, tt.args...)
			err := run(t.Context(), args, func(string) string { return "" }, io.Discard)
			if !errors.As(err, new(*cli.UsageError)) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want a usage error about %q", err, tt.want)
			}
			if files, _ := os.ReadDir(dir); len(files) > 0 {
				t.Errorf("a refused start created %s", files[0].Name())
			}
		})
	}
}
