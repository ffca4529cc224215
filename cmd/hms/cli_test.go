package main

import (
	"bytes"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/cli"
)

// TestCLICommands: hms hands every command but up and version to the
// operator CLI, and its help lists both kinds.
func TestCLICommands(t *testing.T) {
	noenv := func(string) string { return "" }
	var out bytes.Buffer
	if err := run(t.Context(), []string{"help"}, noenv, &out); !errors.Is(err, cli.ErrHelp) {
		t.Fatalf("hms help: %v", err)
	}
	for _, want := range []string{"\n  up ", "\n  version ", "\n  get nodes ", "\n  status "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("hms help lacks %q:\n%s", want, out.String())
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String()
	ln.Close()
	err = run(t.Context(), []string{"get", "nodes", "-hsm-url", down}, noenv, &out)
	if err == nil || errors.As(err, new(*cli.UsageError)) || !strings.Contains(err.Error(), "cannot reach hsm at "+down) {
		t.Errorf("hms get nodes with hsm down: %v, want a failure naming hsm", err)
	}
}
