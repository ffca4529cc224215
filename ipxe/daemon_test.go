package ipxe

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/httpserver/conntest"
)

// TestMaxConnectionsFlag: -max-connections reaches the daemon's server.
func TestMaxConnectionsFlag(t *testing.T) {
	conntest.CheckFlag(t, "bss", func(f *cli.FlagSet) func() (conntest.Daemon, error) {
		fl := RegisterFlags(f)
		return func() (conntest.Daemon, error) {
			cfg, err := fl.Config()
			if err != nil {
				return nil, err
			}
			return StartDaemon(t.Context(), cfg)
		}
	})
}

// TestTrustedProxiesFlag: -trusted-proxies reaches the cloud-init routes:
// a request from a listed proxy is answered for the address it forwards.
func TestTrustedProxiesFlag(t *testing.T) {
	d := startFromFlags(t, "-trusted-proxies", "127.0.0.1")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	d.Service().cache.replaceAll(map[string]*Node{"x3000c0s2b0n0": node("x3000c0s2b0n0", "Compute", "", 2, nil, "10.0.0.2")})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, d.URL()+"/meta-data?key=local-hostname", nil)
	req.Header.Set("X-Forwarded-For", "10.0.0.2")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if body, _ := io.ReadAll(resp.Body); string(body) != `"x3000c0s2b0n0"`+"\n" {
		t.Errorf("meta-data through a trusted proxy: %d %s", resp.StatusCode, body)
	}
}

// TestDiscoveryTokenFile: the token in -discovery-token-file reaches the
// script settings the discovery image's command line is built from.
func TestDiscoveryTokenFile(t *testing.T) {
	dir := t.TempDir()
	tok := filepath.Join(dir, "disc.token")
	if err := os.WriteFile(tok, []byte(" disc-token-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startFromFlags(t, "-discovery-token-file", tok)
	defer d.Close()
	if got := d.Service().cfg.DiscoveryToken; got != "disc-token-0123456789" {
		t.Errorf("discovery token %q", got)
	}
}

// startFromFlags starts (not runs) a bss on loopback from its flags, args
// after -listen and -db.
func startFromFlags(t *testing.T, args ...string) *Daemon {
	t.Helper()
	f := cli.NewFlagSet("bss", func(string) string { return "" }, io.Discard)
	fl := RegisterFlags(f)
	if err := f.Parse(append([]string{"-listen", "127.0.0.1:0", "-db", filepath.Join(t.TempDir(), "bss.db")}, args...)); err != nil {
		t.Fatal(err)
	}
	cfg, err := fl.Config()
	if err != nil {
		t.Fatal(err)
	}
	d, err := StartDaemon(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
