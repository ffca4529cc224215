package ctl_test

import (
	"net"
	"strings"
	"testing"
)

// closedURL is a loopback URL nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	mustOK(t, err)
	u := "http://" + ln.Addr().String()
	ln.Close()
	return u
}

// TestBadInput: a bad command line exits 2, a failure 1, each with one line
// saying what is wrong, and nothing is printed on stdout.
func TestBadInput(t *testing.T) {
	urls := startSuite(t)
	seedHSM(t, urls["hsm"])
	e := suiteEnv(t, urls)
	down := closedURL(t)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{name: "unknown command", args: []string{"frobnicate"}, code: 2, want: `unknown command "frobnicate"`},
		{name: "missing subcommand", args: []string{"get"}, code: 2, want: "want one of nodes, components"},
		{name: "unknown subcommand", args: []string{"get", "toasters"}, code: 2, want: `unknown "toasters"`},
		{name: "unknown flag", args: []string{"get", "nodes", "-colour"}, code: 2, want: "-colour"},
		{name: "bad output", args: []string{"get", "nodes", "-o", "xml"}, code: 2, want: `-o "xml"`},
		{name: "stray argument", args: []string{"get", "nodes", "x3000"}, code: 2, want: `unexpected argument "x3000"`},
		{name: "bad url", args: []string{"get", "nodes", "-hsm-url", "mgmt1:27779"}, code: 2, want: "hsm-url"},
		{name: "unreachable", args: []string{"get", "nodes", "-hsm-url", down}, code: 1,
			want: "cannot reach hsm at " + down + " (set by -hsm-url): connection refused"},
		{name: "4xx", args: []string{"get", "nodes", "-state", "Sleepy"}, code: 1, want: "400"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := hms(t, e, tt.args...)
			if r.code() != tt.code {
				t.Fatalf("exit %d, want %d (err %v)", r.code(), tt.code, r.err)
			}
			msg := r.err.Error()
			if !strings.Contains(msg, tt.want) || strings.Contains(msg, "\n") {
				t.Errorf("error %q, want one line containing %q", msg, tt.want)
			}
			if r.stdout != "" {
				t.Errorf("stdout %q, want nothing", r.stdout)
			}
		})
	}
}

// TestHelp: every command answers -help with its usage (exit 0), and `hms
// help CMD` says the same.
func TestHelp(t *testing.T) {
	e := env(t, nil)
	top := hms(t, e, "help")
	if top.code() != 0 || !strings.Contains(top.stdout, "get nodes") {
		t.Fatalf("hms help: %q %v", top.stdout, top.err)
	}
	for _, cmd := range [][]string{{"get", "nodes"}, {"status"}, {"config"}, {"describe", "node"}, {"wait"}, {"node", "add"}, {"node", "remove"}, {"boot", "set"}, {"layout", "load"}, {"completion"}} {
		name := strings.Join(cmd, " ")
		r := hms(t, e, append(cmd, "-help")...)
		if r.code() != 0 || !strings.HasPrefix(r.stdout, "Usage: hms "+name) {
			t.Errorf("hms %s -help: code %d, %q", name, r.code(), r.stdout)
		}
		if h := hms(t, e, append([]string{"help"}, cmd...)...); h.stdout != r.stdout {
			t.Errorf("hms help %s differs from -help:\n%s\n%s", name, h.stdout, r.stdout)
		}
	}
	if r := hms(t, e, "help", "get"); r.code() != 0 || !strings.Contains(r.stdout, "get subscriptions") {
		t.Errorf("hms help get: %q", r.stdout)
	}
}
