package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/auth"
	"github.com/hmsuite/hms/internal/cli"
)

// suiteUp runs `hms up` on loopback ports picked by the kernel and returns
// each daemon's URL, as up prints them.
func suiteUp(t *testing.T, dir string) map[string]string {
	t.Helper()
	return suiteUpWith(t, dir, func(string) string { return "" })
}

// suiteUpWith is suiteUp with an environment and more flags.
func suiteUpWith(t *testing.T, dir string, getenv func(string) string, more ...string) map[string]string {
	t.Helper()
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		args := append([]string{"up", "-data-dir", dir, "-log-level", "error", "-sls-listen", "127.0.0.1:0",
			"-hsm-listen", "127.0.0.1:0", "-hbtd-listen", "127.0.0.1:0", "-hmnfd-listen", "127.0.0.1:0", "-bss-listen", "127.0.0.1:0", "-pcs-listen", "127.0.0.1:0", "-bos-listen", "127.0.0.1:0", "-nodes-listen", "127.0.0.1:0", "-reds-listen", "127.0.0.1:0"}, more...)
		done <- run(ctx, args, getenv, pw)
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("hms up: %v", err)
		}
	})
	urls := map[string]string{}
	sc := bufio.NewScanner(pr)
	ready := false
	for !ready && sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 {
			urls[f[0]] = f[1]
		}
		ready = sc.Text() == "ready"
	}
	if len(urls) < 8 || !ready {
		t.Fatalf("hms up printed %v (ready %v) before stopping", urls, ready)
	}
	go io.Copy(io.Discard, pr)
	return urls
}

func call(t *testing.T, method, url, body string, want int) []byte {
	t.Helper()
	return send(t, http.DefaultClient, method, url, body, want)
}

// send is call with the client hc.
func send(t *testing.T, hc *http.Client, method, url, body string, want int) []byte {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, url, resp.StatusCode, want, b)
	}
	return b
}

// TestUpRunsTheSuite: the daemons `hms up` starts are wired to each other:
// a node SLS knows gets its NID and Role in HSM, its first heartbeat to hbtd
// makes it Ready in HSM, and the SCN reaches an hmnfd subscriber over the
// in-process bus, and bss boots it by its role.
func TestUpRunsTheSuite(t *testing.T) {
	dir := t.TempDir()
	subURL, scns := scnSink(t)
	u := suiteUp(t, dir)

	call(t, "POST", u["sls"]+"/v1/hardware", `{"Xname":"x3000c0s1b0n0","Class":"River",
		"ExtraProperties":{"NID":17,"Role":"Compute"}}`, http.StatusCreated)
	call(t, "POST", u["hsm"]+"/hsm/v2/State/Components", `{"Components":[{"ID":"x3000c0s1b0n0","State":"On"}]}`, http.StatusNoContent)
	call(t, "POST", u["hmnfd"]+"/hmi/v1/subscribe", `{"Subscriber":"x3000c0s2b0n0","Components":["x3000c0s1b0n0"],
		"States":["Ready"],"Url":"`+subURL+`"}`, http.StatusOK)
	call(t, "POST", u["hbtd"]+"/hmi/v1/heartbeat", `{"Component":"x3000c0s1b0n0","Hostname":"nid17","NID":"17",
		"Status":"OK","TimeStamp":"2026-11-21T12:00:00Z"}`, http.StatusOK)

	waitSCN(t, scns, "x3000c0s1b0n0", "Ready")
	var c struct {
		State, Role string
		NID         int
	}
	json.Unmarshal(call(t, "GET", u["hsm"]+"/hsm/v2/State/Components/x3000c0s1b0n0", "", http.StatusOK), &c)
	if c.State != "Ready" || c.NID != 17 || c.Role != "Compute" {
		t.Errorf("HSM has %+v, want Ready with NID 17 and Role Compute from SLS", c)
	}
	// bss follows HSM: the node's Role (from SLS) picks its boot entry.
	// POST /hosts re-reads HSM and answers once it has.
	call(t, "POST", u["bss"]+"/boot/v1/hosts", "", http.StatusNoContent)
	call(t, "GET", u["bss"]+"/boot/v1/hosts?name=x3000c0s1b0n0", "", http.StatusOK)
	call(t, "PUT", u["bss"]+"/boot/v1/bootparameters", `{"hosts":["Compute"],"kernel":"http://k/vmlinuz"}`, http.StatusOK)
	if script := string(call(t, "GET", u["bss"]+"/boot/v1/bootscript?name=x3000c0s1b0n0", "", http.StatusOK)); !strings.Contains(script, "kernel --name kernel http://k/vmlinuz xname=x3000c0s1b0n0 nid=17 ") {
		t.Errorf("bss script for the node:\n%s", script)
	}
	for _, f := range []string{"sls.db", "hsm.db", "hbtd.db", "hmnfd.db", "bss.db", "pcs.db", "bos.db", "nodes.db", "nodes-cred.key", "hsm-cred.key"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("data directory: %v", err)
		}
	}
}

// scnSink is a subscriber's SCN receiver: its URL, and the SCNs it got.
func scnSink(t *testing.T) (string, <-chan map[string]any) {
	t.Helper()
	scns := make(chan map[string]any, 16)
	sub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var scn map[string]any
		json.NewDecoder(r.Body).Decode(&scn)
		scns <- scn
	}))
	t.Cleanup(sub.Close)
	return sub.URL + "/scn", scns
}

// waitSCN waits for the SCN of node going to state (the event a
// background change, such as hbtd telling hsm, ends with).
func waitSCN(t *testing.T, scns <-chan map[string]any, node, state string) {
	t.Helper()
	select {
	case scn := <-scns:
		comps, _ := scn["Components"].([]any)
		if scn["State"] != state || len(comps) != 1 || comps[0] != node {
			t.Errorf("subscriber got %v, want %s going %s", scn, node, state)
		}
	case <-time.After(30 * time.Second): // a guard against a hang, not a wait
		t.Fatalf("no SCN of %s going %s reached the subscriber", node, state)
	}
}

// TestUpBadInput: a bad command, flag, flag of a daemon, file or port stops
// hms with a usage error (exit 2) before anything is created or started.
func TestUpBadInput(t *testing.T) {
	busy := httptest.NewServer(http.NotFoundHandler())
	defer busy.Close()
	addr := strings.TrimPrefix(busy.URL, "http://")
	nodeKey := filepath.Join(t.TempDir(), "node.key")
	if err := auth.WriteKeyFile(nodeKey); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{name: "no command", want: "a command is required"},
		{name: "unknown command", args: []string{"down"}, want: "unknown command"},
		{name: "bad listen", args: []string{"up", "-sls-listen", "nope"}, want: "HOST:PORT"},
		{name: "stray argument", args: []string{"up", "extra"}, want: "unexpected argument"},
		{name: "port taken", args: []string{"up", "-sls-listen", "127.0.0.1:0", "-hsm-listen", addr}, want: "-hsm-listen"},
		{name: "negative workers", args: []string{"up", "-hsm-discovery-workers", "-1"}, want: "-hsm-discovery-workers -1"},
		{name: "zero workers", args: []string{"up", "-hsm-discovery-workers", "0"}, want: "at least 1"},
		{name: "workers env twin", env: map[string]string{"HMS_HSM_DISCOVERY_WORKERS": "0"}, args: []string{"up"}, want: "at least 1"},
		{name: "missing hms config", args: []string{"up", "-hsm-hms-config", "/nonexistent/hms_config.json"}, want: "no such file"},
		{name: "hbtd times", args: []string{"up", "-hbtd-warntime", "40", "-hbtd-errtime", "30"}, want: "must be less than"},
		{name: "kafka", args: []string{"up", "-hbtd-kafka-brokers", "k:9092"}, want: "separate binaries"},
		{name: "bad duration", args: []string{"up", "-hmnfd-retry-max", "5"}, want: "such as 500ms"},
		{name: "pcs sample interval", args: []string{"up", "-pcs-sample-interval", "0s"}, want: "-pcs-sample-interval must be positive"},
		{name: "auth-local and a key source", args: []string{"up", "-auth-local", "-jwks-url", "https://kc/certs"}, want: "-auth-local makes"},
		{name: "node-token key alone", args: []string{"up", "-bss-node-token-key", nodeKey}, want: "-bss-node-token-key needs"},
		{name: "bad node-token key", args: []string{"up", "-bss-node-token-key", "/etc/hosts"}, want: "-bss-node-token-key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			args := tt.args
			if len(args) > 0 && args[0] == "up" {
				args = append([]string{"up", "-data-dir", dir, "-sls-listen", "127.0.0.1:0", "-hsm-listen", "127.0.0.1:0", "-hbtd-listen", "127.0.0.1:0",
					"-hmnfd-listen", "127.0.0.1:0", "-bss-listen", "127.0.0.1:0", "-pcs-listen", "127.0.0.1:0", "-bos-listen", "127.0.0.1:0", "-nodes-listen", "127.0.0.1:0", "-reds-listen", "127.0.0.1:0"}, args[1:]...)
			}
			err := run(t.Context(), args, func(k string) string { return tt.env[k] }, io.Discard)
			if !errors.As(err, new(*cli.UsageError)) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("hms %v: err = %v, want a usage error about %q", args, err, tt.want)
			}
			if _, err := os.Stat(dir); err == nil {
				t.Errorf("a refused start created the data directory")
			}
		})
	}
}

// TestUpTakesTheDaemonsFlags: a daemon's flag given to hms up with its prefix,
// or its own env twin, reaches the daemon.
func TestUpTakesTheDaemonsFlags(t *testing.T) {
	env := map[string]string{"HMS_HBTD_WARNTIME": "7"}
	u := suiteUpWith(t, t.TempDir(), func(k string) string { return env[k] }, "-hbtd-errtime", "41")
	var p struct{ Warntime, Errtime string }
	json.Unmarshal(call(t, "GET", u["hbtd"]+"/hmi/v1/params", "", http.StatusOK), &p)
	if p.Warntime != "7" || p.Errtime != "41" {
		t.Errorf("hbtd params %+v, want Warntime 7 (HMS_HBTD_WARNTIME) and Errtime 41 (-hbtd-errtime)", p)
	}
}

// TestUpRefusesADataDirInUse: a second hms up (another process) on the same
// data directory exits non-zero with one line naming the database, before it
// starts a daemon; the first one goes on.
func TestUpRefusesADataDirInUse(t *testing.T) {
	if args := os.Getenv("HMS_TEST_MAIN_ARGS"); args != "" {
		os.Args = append([]string{"hms"}, strings.Fields(args)...)
		cli.Main("hms", run)
		os.Exit(0)
	}
	dir := t.TempDir()
	u := suiteUp(t, dir)
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestUpRefusesADataDirInUse$")
	cmd.Env = append(os.Environ(), "HMS_TEST_MAIN_ARGS=up -data-dir "+dir+" -sls-listen 127.0.0.1:0 -hsm-listen 127.0.0.1:0 "+
		"-hbtd-listen 127.0.0.1:0 -hmnfd-listen 127.0.0.1:0 -bss-listen 127.0.0.1:0 -pcs-listen 127.0.0.1:0 -bos-listen 127.0.0.1:0 -nodes-listen 127.0.0.1:0 -reds-listen 127.0.0.1:0 -log-level error")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("second hms up: %v, want exit status 1; stderr:\n%s", err, stderr.String())
	}
	if msg := stderr.String(); strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "sls.db is used by another process") {
		t.Errorf("second hms up said %q, want one line saying sls.db is in use", msg)
	}
	if stdout.Len() > 0 {
		t.Errorf("second hms up started daemons:\n%s", stdout.String())
	}
	call(t, "GET", u["sls"]+"/v1/health", "", http.StatusOK)
}

// TestUpGatewayPaths: each daemon also answers under its CSM API gateway
// prefix, so the cray CLI and CSM scripts can be pointed at it, and every
// daemon answers an unknown route with a problem+json 404.
func TestUpGatewayPaths(t *testing.T) {
	urls := suiteUp(t, t.TempDir())
	for _, tc := range []struct {
		daemon, path string
		status       int
	}{
		{daemon: "sls", path: "/apis/sls/v1/version", status: 200},
		{daemon: "hsm", path: "/apis/smd/hsm/v2/service/ready", status: 200},
		{daemon: "hbtd", path: "/apis/hbtd/hmi/v1/liveness", status: 204},
		{daemon: "hmnfd", path: "/apis/hmnfd/hmi/v1/liveness", status: 204},
		{daemon: "hmnfd", path: "/apis/hmnfd/hmi/v2/subscriptions", status: 200},
		{daemon: "bss", path: "/apis/bss/boot/v1/bootparameters", status: 200},
		{daemon: "pcs", path: "/apis/power-control/v1/transitions", status: 200},
		{daemon: "pcs", path: "/apis/capmc/capmc/v1/liveness", status: 204},
		{daemon: "bos", path: "/apis/bos/v2/healthz", status: 200},
		{daemon: "nodes", path: "/nodes/v1/liveness", status: 204},
		{daemon: "sls", path: "/apis/smd/hsm/v2/service/ready", status: 404},
		{daemon: "hsm", path: "/apis/sls/v1/version", status: 404},
		{daemon: "hbtd", path: "/hmi/v1/nowhere", status: 404},
		{daemon: "hmnfd", path: "/nowhere", status: 404},
	} {
		resp, err := http.Get(urls[tc.daemon] + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s GET %s: %d, want %d", tc.daemon, tc.path, resp.StatusCode, tc.status)
		}
		if ct := resp.Header.Get("Content-Type"); tc.status == 404 && ct != "application/problem+json" {
			t.Errorf("%s GET %s: Content-Type %q, want problem+json", tc.daemon, tc.path, ct)
		}
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"-version"}, {"up", "-version"}} {
		var out strings.Builder
		err := run(t.Context(), args, func(string) string { return "" }, &out)
		if err != nil && !errors.Is(err, cli.ErrHelp) {
			t.Fatalf("%v: %v", args, err)
		}
		if f := strings.Fields(out.String()); len(f) < 2 || f[0] != "hms" {
			t.Errorf("%v printed %q, want \"hms <version>\"", args, out.String())
		}
	}
}
