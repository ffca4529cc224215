// Package fleetproc runs simulated BMC fleets (redfishsim) in child
// processes, for the benchmarks that simulate more BMCs than one process
// has file descriptors for (10,000 listeners and both ends of their
// connections): the test binary runs again with one test selected and an
// environment variable saying what to serve (a Spec: the parent writes it
// with Spec.String, the child reads it with Child). The child announces each BMC
// on its stdout, "bmc <xname> <addr>", then "ready", and serves until its
// stdin closes, which happens when the benchmark that started it ends.
package fleetproc

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/redfishsim"
)

// Start runs test (a -test.run pattern) of the test binary in a child
// process with env added to the environment, and returns it with its
// stdout. The child's stdin closes, and it is waited for, when tb ends.
func Start(tb testing.TB, test string, env ...string) (*exec.Cmd, *bufio.Scanner) {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run="+test)
	cmd.Env = append(os.Environ(), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	return cmd, bufio.NewScanner(stdout)
}

// ReadAddrs reads a child's announcement up to its "ready" line into addrs
// (BMC xname -> address); other lines are skipped.
func ReadAddrs(sc *bufio.Scanner, addrs map[string]string) {
	for sc.Scan() && sc.Text() != "ready" {
		if f := strings.Fields(sc.Text()); len(f) == 3 && f[0] == "bmc" {
			addrs[f[1]] = f[2]
		}
	}
}

// Config is the fleet a child serves: count BMCs of one node each, named
// from the first'th xname of redfishsim.DefaultXname on, user root with
// password, on loopback ports.
func Config(first, count int, password string) redfishsim.FleetConfig {
	return redfishsim.FleetConfig{Count: count, Listen: "127.0.0.1:0", Tree: redfishsim.Template(1),
		User: "root", Password: password, Xname: func(i int) string { return redfishsim.DefaultXname(first + i) }}
}

// Announce writes f's BMCs and "ready" to w, buffered into one write.
func Announce(w io.Writer, f *redfishsim.Fleet) error {
	bw := bufio.NewWriter(w)
	for _, m := range f.Members() {
		fmt.Fprintf(bw, "bmc %s %s\n", m.BMC.Xname(), m.Addr)
	}
	fmt.Fprintln(bw, "ready")
	return bw.Flush()
}

// StdinContext returns a context cancelled when the child's stdin closes:
// the parent is done with it.
func StdinContext() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); cancel() }()
	return ctx
}
