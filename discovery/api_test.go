package discovery

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/httpserver/routetest"
	"github.com/hmsuite/hms/ipxe/lease"
)

const testToken = "0123456789abcdef-token"

// startDaemon runs a whole reds on loopback (SLS and HSM unreachable: the
// API does not need them) and returns its URL and daemon.
func startDaemon(t *testing.T, token bool) (string, *Daemon) {
	t.Helper()
	dir := t.TempDir()
	cfg := DaemonConfig{Listen: "127.0.0.1:0", DB: filepath.Join(dir, "reds.db"), CredKeyFile: filepath.Join(dir, "key"),
		SLSURL: "http://127.0.0.1:1", HSMURL: "http://127.0.0.1:1"}
	if token {
		cfg.TokenFile = filepath.Join(dir, "token")
		if err := os.WriteFile(cfg.TokenFile, []byte(testToken+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return runDaemon(t, cfg)
}

// runDaemon starts and runs a daemon of cfg until the test ends.
func runDaemon(t *testing.T, cfg DaemonConfig) (string, *Daemon) {
	t.Helper()
	d, err := StartDaemon(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return d.URL(), d
}

func call(t *testing.T, method, url, auth, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestOpenAPIDocument: the served document lists every route and no other.
func TestOpenAPIDocument(t *testing.T) {
	url, d := startDaemon(t, false)
	code, doc := call(t, "GET", url+"/v1/openapi.yaml", "", "")
	if code != 200 {
		t.Fatalf("GET /v1/openapi.yaml: %d", code)
	}
	routetest.Check(t, NewAPI(d.svc, d.store, nil, "").Handler().(*httpserver.Mux), []byte(doc))
}

// TestAPI: probes, metrics, the gateway prefix, the unknown list, and the
// node-side routes closed without a token and refused with a wrong one.
func TestAPI(t *testing.T) {
	url, d := startDaemon(t, true)
	closed, _ := startDaemon(t, false)
	// The discovery token obtains credentials for a MAC holding a lease only.
	d.svc.noteLease(lease.Event{Kind: lease.Commit, MACAddress: "a4:bf:01:38:ee:5d", IPAddress: "10.254.1.7"})
	body := `{"addresses":[{"macAddress":"a4bf0138ee5d","IPAddresses":[{"addressType":"IPv4","address":"10.254.1.7"}]}]}`
	tests := []struct {
		name, method, url, auth, body string
		want                          int
		contains                      string
	}{
		{name: "liveness", method: "GET", url: url + "/v1/liveness", want: 204},
		{name: "readiness", method: "GET", url: url + "/v1/readiness", want: 204},
		{name: "gateway", method: "GET", url: url + "/apis/reds/v1/liveness", want: 204},
		{name: "metrics", method: "GET", url: url + "/metrics", want: 200, contains: "reds_unknown_macs 0"},
		{name: "unknown", method: "GET", url: url + "/v1/unknown", want: 200, contains: `{"Unknown":[]}`},
		{name: "endpoints", method: "GET", url: url + "/v1/endpoints", want: 200, contains: `{"Endpoints":[]}`},
		{name: "no route", method: "GET", url: url + "/v1/nothing", want: 404, contains: `"status":404`},
		{name: "no token", method: "POST", url: url + "/v1/credentials", body: body, want: 401},
		{name: "wrong token", method: "POST", url: url + "/v1/credentials", auth: "Bearer nope", body: body, want: 401},
		{name: "closed", method: "POST", url: closed + "/v1/credentials", auth: "Bearer " + testToken, body: body, want: 403},
		{name: "bad mac", method: "POST", url: url + "/v1/credentials", auth: "Bearer " + testToken,
			body: `{"addresses":[{"macAddress":"zz"}]}`, want: 400},
		{name: "credentials", method: "POST", url: url + "/v1/credentials", auth: "Bearer " + testToken, body: body,
			want: 200, contains: `"username":"root"`},
		{name: "discovery", method: "PUT", url: url + "/v1/discovery", auth: "Bearer " + testToken, body: body, want: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, got := call(t, tt.method, tt.url, tt.auth, tt.body)
			if code != tt.want || !strings.Contains(got, tt.contains) {
				t.Errorf("%s %s: %d %s; want %d containing %q", tt.method, tt.url, code, got, tt.want, tt.contains)
			}
		})
	}
}

// TestFlags: defaults make a valid config; bad values are usage errors.
func TestFlags(t *testing.T) {
	parse := func(args ...string) (DaemonConfig, error) {
		f := cli.NewFlagSet("reds", func(string) string { return "" }, io.Discard)
		fl := RegisterFlags(f)
		if err := f.ParseOrUsage(append([]string{"-listen", "127.0.0.1:0"}, args...)); err != nil {
			return DaemonConfig{}, err
		}
		return fl.Config()
	}
	cfg, err := parse("-roles", "river", "-ntp-servers", "10.1.1.1, 10.1.1.2")
	if err != nil || !cfg.Service.River || cfg.Service.Mountain || len(cfg.Service.NTP) != 2 || cfg.BMC.DefaultUser != "root" {
		t.Fatalf("config %+v, %v", cfg, err)
	}
	for _, args := range [][]string{
		{"-roles", "lake"}, {"-roles", ""}, {"-bmc-password-length", "8"}, {"-bmc-password-chars", "abc"},
		{"-snmp-port", "0"}, {"-presence-interval", "0s"}, {"-discovery-token-file", "/nonexistent"}, {"-workers", "0"},
	} {
		if _, err := parse(args...); err == nil {
			t.Errorf("%v accepted", args)
		} else if _, ok := err.(*cli.UsageError); !ok {
			t.Errorf("%v: %v is not a usage error", args, err)
		}
	}
}
