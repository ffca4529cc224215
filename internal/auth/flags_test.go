package auth

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/hmsuite/hms/internal/cli"
)

func parse(t *testing.T, env map[string]string, args ...string) (Config, string, error) {
	t.Helper()
	var out bytes.Buffer
	f := cli.NewFlagSet("testd", func(k string) string { return env[k] }, &out)
	f.Environ = func() []string { return nil }
	fl := RegisterFlags(f)
	if err := f.Parse(args); err != nil {
		return Config{}, out.String(), err
	}
	c, err := fl.Config(testTable())
	return c, out.String(), err
}

func TestFlags(t *testing.T) {
	c, _, err := parse(t, map[string]string{"HMS_TESTD_JWKS_URL": "https://kc/certs"},
		"-roles-claim", "realm_access.roles, resource_access.hms.roles", "-auth-shadow", "-token", "t0")
	if err != nil {
		t.Fatal(err)
	}
	if !c.On() || !c.Shadow || c.JWKSURL != "https://kc/certs" || len(c.RolesClaims) != 2 || c.Token.Token != "t0" {
		t.Errorf("config %+v", c)
	}
	if _, _, err := parse(t, nil, "-node-jwt-keys", "http://bss:27778/boot/v1/node-jwks"); err == nil || !strings.Contains(err.Error(), "needs") {
		t.Errorf("-node-jwt-keys alone: %v; want a usage error (it would refuse every admin and peer call)", err)
	}
	if c, _, err := parse(t, nil, "-jwks-url", "https://kc/certs", "-node-jwt-keys", "http://bss:27778/boot/v1/node-jwks"); err != nil || !c.On() || c.NodeKeys == "" {
		t.Errorf("-node-jwt-keys with site keys: %+v, %v; want auth on", c, err)
	}
	if c, _, err := parse(t, nil); err != nil || c.On() {
		t.Errorf("no flags: %+v, %v; want auth off", c, err)
	}
	_, out, err := parse(t, nil, "-help-auth")
	if !errors.Is(err, cli.ErrHelp) || !strings.Contains(out, "POST /v1/loadstate") {
		t.Errorf("-help-auth: %v\n%s", err, out)
	}
	for _, args := range [][]string{
		{"-jwks-url", "kc/certs"},
		{"-jwks-url", "https://kc/certs", "-jwt-key-file", "/etc/hosts"},
		{"-jwt-key-file", "/etc/hosts"},
		{"-auth-shadow"},
		{"-token", "a", "-token-file", "/etc/hosts"},
		{"-token-file", "/nonexistent"},
		{"-node-jwt-keys", "/etc/hosts"},
		{"-metrics-auth"},
	} {
		if _, _, err := parse(t, nil, args...); !errors.As(err, new(*cli.UsageError)) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

// TestLocalConfig: for a caller that brings its own keys (hms up
// -auth-local), -auth-shadow and -metrics-auth need none on the command
// line.
func TestLocalConfig(t *testing.T) {
	f := cli.NewFlagSet("testd", func(string) string { return "" }, &bytes.Buffer{})
	f.Environ = func() []string { return nil }
	fl := RegisterFlags(f)
	if err := f.Parse([]string{"-auth-shadow", "-metrics-auth"}); err != nil {
		t.Fatal(err)
	}
	c, err := fl.LocalConfig(testTable())
	if err != nil || !c.Shadow || !c.MetricsAuth || c.On() {
		t.Errorf("LocalConfig = %+v, %v; want shadow and metrics auth, keys to come", c, err)
	}
}
