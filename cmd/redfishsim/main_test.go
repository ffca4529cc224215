package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/cli"
)

func TestFlagErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "bad rate", args: []string{"-error-rate", "2"}, want: "error rate"},
		{name: "relative fault path", args: []string{"-missing-paths", "Systems"}, want: "does not start with /"},
		{name: "xname with a fleet", args: []string{"-count", "2", "-xname", "x1c0s0b0"}, want: "-xname"},
		{name: "no systems", args: []string{"-systems", "0"}, want: "at least 1"},
		{name: "bad listen", args: []string{"-listen", "nope"}, want: "HOST:PORT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := run(t.Context(), tt.args, func(string) string { return "" }, io.Discard)
			if !errors.As(err, new(*cli.UsageError)) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want a usage error containing %q", err, tt.want)
			}
		})
	}
}

// TestRunServes starts the binary's run on an ephemeral port (set through
// the env twin), reads the BMC URL it prints, and reads with Basic auth; a
// fault given by env twin is in force.
func TestRunServes(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	env := map[string]string{"HMS_REDFISHSIM_LISTEN": "127.0.0.1:0", "HMS_REDFISHSIM_TLS": "false",
		"HMS_REDFISHSIM_MISSING_PATHS": "/redfish/v1/Chassis"}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-user", "u", "-password", "p", "-systems", "2"}, func(k string) string { return env[k] }, pw)
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	xname, url, _ := strings.Cut(strings.TrimSpace(line), " ")
	if xname != "x3000c0s0b0" || !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("printed %q", line)
	}
	for path, want := range map[string]int{"/redfish/v1/Systems/Node1": 200, "/redfish/v1/Chassis/Enclosure": 404} {
		r, _ := http.NewRequestWithContext(ctx, "GET", url+path, nil)
		r.SetBasicAuth("u", "p")
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("run: %v", err)
	}
}
