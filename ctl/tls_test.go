package ctl_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/mtls/mtlstest"
)

// TestClientCertificate: a daemon run with -client-ca answers the CLI when
// it presents a certificate of the CA (from its flags, HMS_TLS_* or a config
// file naming files relative to itself), and refuses it in the handshake
// without one.
func TestClientCertificate(t *testing.T) {
	ca := mtlstest.NewCA(t)
	tc, err := ca.Config("hsm").Server()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"Components":[{"ID":"x3000c0s1b0n0","Type":"Node","State":"Ready"}]}`))
	}))
	srv.TLS = tc
	srv.StartTLS()
	t.Cleanup(srv.Close)
	cert, key := ca.Issue("operator")

	home := t.TempDir()
	dir := filepath.Join(home, ".config", "hms")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for src, dst := range map[string]string{cert: "op.pem", key: "op-key.pem", ca.File(): "ca.pem"} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "config.yaml"), []byte("tls-cert: op.pem\ntls-key: op-key.pem\nca-file: ca.pem\n"), 0o600)

	for _, tt := range []struct {
		name string
		env  map[string]string
		args []string
		ok   bool
	}{
		{name: "flags", args: []string{"-tls-cert", cert, "-tls-key", key, "-ca-file", ca.File()}, ok: true},
		{name: "env", env: map[string]string{"HMS_TLS_CERT": cert, "HMS_TLS_KEY": key, "HMS_CA_FILE": ca.File()}, ok: true},
		{name: "config file", env: map[string]string{"HOME": home}, ok: true},
		{name: "no certificate", args: []string{"-ca-file", ca.File()}},
		{name: "no CA", args: []string{"-tls-cert", cert, "-tls-key", key}},
	} {
		env := map[string]string{"HOME": t.TempDir()}
		for k, v := range tt.env {
			env[k] = v
		}
		r := runWith(t, env, "", append([]string{"get", "nodes", "-hsm-url", srv.URL}, tt.args...)...)
		switch {
		case tt.ok && r.err != nil:
			t.Errorf("%s: %v (%s)", tt.name, r.err, r.stderr)
		case tt.ok && !strings.Contains(r.stdout, "x3000c0s1b0n0"):
			t.Errorf("%s: output %q", tt.name, r.stdout)
		case !tt.ok && r.err == nil:
			t.Errorf("%s: the daemon answered: %q", tt.name, r.stdout)
		}
	}

	r := runWith(t, map[string]string{"HOME": t.TempDir()}, "", "get", "nodes", "-hsm-url", srv.URL, "-tls-cert", cert)
	var ue *cli.UsageError
	if !errors.As(r.err, &ue) {
		t.Errorf("-tls-cert without -tls-key: %v, want a usage error", r.err)
	}
}
