package mtls_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/mtls"
	"github.com/hmsuite/hms/internal/mtls/mtlstest"
)

// TestForClient: a tool's configuration presents its certificate and
// trusts the CA file; with the CA file alone it trusts the CA and presents
// nothing, which a daemon with -client-ca refuses and one without accepts.
func TestForClient(t *testing.T) {
	ca := mtlstest.NewCA(t)
	strict := serve(t, ca.Config("hsm"))
	serverOnly := ca.Config("hbtd")
	serverOnly.ClientCA = ""
	open := serve(t, serverOnly)
	cert, key := ca.Issue("x3000c0s1b0n0")

	c, err := mtls.ForClient(cert, key, ca.File())
	if err != nil {
		t.Fatal(err)
	}
	if got, err := get(t, c.Client(nil), strict); err != nil || got != "x3000c0s1b0n0" {
		t.Errorf("with a certificate: %q, %v", got, err)
	}
	c, err = mtls.ForClient("", "", ca.File())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := get(t, c.Client(nil), strict); err == nil {
		t.Error("a daemon with -client-ca answered a tool without a certificate")
	}
	if _, err := get(t, c.Client(nil), open); err != nil {
		t.Errorf("CA file alone, daemon without -client-ca: %v", err)
	}
	if c, _ := mtls.ForClient("", "", ""); c.Client(nil) != nil {
		t.Error("nothing configured: want the client unchanged")
	}

	for name, args := range map[string][]string{
		"certificate without key": {"-tls-cert", cert},
		"missing CA file":         {"-ca-file", "/nonexistent"},
		"CA file not PEM":         {"-tls-cert", cert, "-tls-key", key, "-ca-file", key},
	} {
		f := cli.NewFlagSet("hbagent", func(string) string { return "" }, nil)
		fl := mtls.RegisterClient(f)
		if err := f.Parse(args); err != nil {
			t.Fatal(err)
		}
		_, err := fl.Config()
		var ue *cli.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "-ca-file") {
			t.Errorf("%s: %v, want a usage error naming the flags", name, err)
		}
	}
}

// TestClientFollowsCARotation: a client whose CA file is replaced trusts
// the new CA from its next connection on, without a restart, and no
// longer the old one.
func TestClientFollowsCARotation(t *testing.T) {
	old, next := mtlstest.NewCA(t), mtlstest.NewCA(t)
	cert, key := old.Issue("hsm")
	rotated := serve(t, mtls.Config{CertFile: cert, KeyFile: key})
	staleCert, staleKey := old.Issue("sls")
	stale := serve(t, mtls.Config{CertFile: staleCert, KeyFile: staleKey}) // keeps the old CA's certificate
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	copyFile(t, old.File(), caFile)
	c, err := mtls.ForClient("", "", caFile)
	if err != nil {
		t.Fatal(err)
	}
	hc := c.Client(nil)
	for _, url := range []string{rotated, stale} {
		if _, err := get(t, hc, url); err != nil {
			t.Fatalf("before the rotation, GET %s: %v", url, err)
		}
	}

	next.IssueTo("hsm", cert, key)
	copyFile(t, next.File(), caFile)
	later := time.Now().Add(time.Minute) // the modification time decides: make sure it moved
	for _, f := range []string{cert, key, caFile} {
		if err := os.Chtimes(f, later, later); err != nil {
			t.Fatal(err)
		}
	}
	hc.CloseIdleConnections() // a kept connection is not verified again
	if _, err := get(t, hc, rotated); err != nil {
		t.Errorf("after the rotation, the server of the new CA: %v", err)
	}
	if _, err := get(t, hc, stale); err == nil {
		t.Error("after the rotation, a certificate of the old CA was still trusted")
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
