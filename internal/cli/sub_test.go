package cli

import (
	"bytes"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestSubPrefixesFlagsAndKeepsTheDaemonsTwins: a flag declared on a Sub set
// is -<daemon>-<flag> on the command line and reads the daemon's own env twin.
func TestSubPrefixesFlagsAndKeepsTheDaemonsTwins(t *testing.T) {
	f := NewFlagSet("up", env(map[string]string{"HMS_HBTD_ERRTIME": "40", "HMS_UP_DATA_DIR": "/d"}), &bytes.Buffer{})
	dir := f.String("data-dir", "./x", "dir")
	hbtd := f.Sub("hbtd")
	errt := hbtd.Seconds("errtime", 30*time.Second, "err")
	warn := hbtd.Seconds("warntime", 10*time.Second, "warn")
	workers := f.Sub("hsm").Int("discovery-workers", 32, "n")
	if err := f.Parse([]string{"-hbtd-warntime", "5", "-hsm-discovery-workers", "4"}); err != nil {
		t.Fatal(err)
	}
	if *dir != "/d" || *errt != 40*time.Second || *warn != 5*time.Second || *workers != 4 {
		t.Fatalf("dir=%q errtime=%v warntime=%v workers=%d", *dir, *errt, *warn, *workers)
	}
	if got := f.EnvName("hbtd-errtime"); got != "HMS_HBTD_ERRTIME" {
		t.Errorf("EnvName(hbtd-errtime) = %q", got)
	}
	if !hbtd.IsSet("errtime") || !hbtd.IsSet("warntime") || f.IsSet("log-level") {
		t.Errorf("IsSet: errtime %v warntime %v", hbtd.IsSet("errtime"), hbtd.IsSet("warntime"))
	}
}

func TestVersionFlag(t *testing.T) {
	var out bytes.Buffer
	f := NewFlagSet("hsm", env(map[string]string{"HMS_HSM_VERSION": "true"}), &out)
	f.Program = "hms up"
	if err := f.Parse(nil); err != nil {
		t.Fatalf("an env twin of -version must not apply: %v", err)
	}
	if err := f.Parse([]string{"-version"}); !errors.Is(err, ErrHelp) {
		t.Fatalf("err = %v, want ErrHelp", err)
	}
	if s := out.String(); !strings.HasPrefix(s, "hms up ") || strings.Count(s, "\n") != 1 {
		t.Fatalf("-version printed %q", s)
	}
}

// TestValueErrorsSayWhatIsExpected: a bad duration, bool or integer names the
// expected form, not the flag package's "parse error".
func TestValueErrorsSayWhatIsExpected(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{args: []string{"-d", "5"}, want: "such as 500ms"},
		{args: []string{"-b=maybe"}, want: "true or false"},
		{args: []string{"-n", "x"}, want: "whole number"},
		{args: []string{"-s", "0"}, want: "positive number of seconds"},
		{args: []string{"-max-connections", "0"}, want: "positive whole number"},
		{args: []string{"-p", "10.0.0.0/8,10.1.2.3/33"}, want: `"10.1.2.3/33": want a CIDR prefix`},
	}
	for _, tt := range tests {
		f := NewFlagSet("x", env(nil), &bytes.Buffer{})
		f.Duration("d", time.Second, "")
		f.Bool("b", false, "")
		f.Int("n", 1, "")
		f.Seconds("s", time.Second, "")
		f.MaxConnections(1)
		f.Prefixes("p", "")
		err := f.Parse(tt.args)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "parse error") {
			t.Errorf("%v: err = %v, want it to say %q", tt.args, err, tt.want)
		}
	}
}

func TestUnknownEnvWarns(t *testing.T) {
	vars := map[string]string{
		"HMS_HBDT_ERRTIME":             "40", // misspelt binary
		"HMS_HSM_DISCOVERY_WORKER":     "4",  // misspelt flag
		"HMS_HSM_NO_SUCH_THING":        "1",  // hsm scope, no flag
		"HMS_HMNFD_RETRY_MIN":          "1s", // another daemon's: not ours to judge
		"HMS_HSM_DISCOVERY_WORKERS":    "4",  // known
		"HMS_CONFIG_PATH":              "/etc/hms_config.json",
		"HMS_UP_HSM_DISCOVERY_WORKERS": "4", // the daemon's twin is HMS_HSM_*
	}
	var environ []string
	for k, v := range vars {
		environ = append(environ, k+"="+v)
	}
	var warn bytes.Buffer
	f := NewFlagSet("up", env(vars), &bytes.Buffer{})
	f.Stderr, f.Environ = &warn, func() []string { return environ }
	f.Sub("hbtd").Seconds("errtime", time.Second, "")
	f.Sub("hsm").Int("discovery-workers", 1, "")
	if err := f.Parse(nil); err != nil {
		t.Fatal(err)
	}
	got := warn.String()
	for _, want := range []string{"HMS_HBDT_ERRTIME is not read by any flag (did you mean HMS_HBTD_ERRTIME?)",
		"HMS_HSM_DISCOVERY_WORKER is not read by any flag (did you mean HMS_HSM_DISCOVERY_WORKERS?)",
		"HMS_HSM_NO_SUCH_THING is not read by any flag",
		"HMS_UP_HSM_DISCOVERY_WORKERS is not read by any flag (did you mean HMS_HSM_DISCOVERY_WORKERS?)"} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings lack %q:\n%s", want, got)
		}
	}
	for _, not := range []string{"HMS_HMNFD_RETRY_MIN", "HMS_CONFIG_PATH", "HMS_HSM_DISCOVERY_WORKERS "} {
		if strings.Contains(got, not) {
			t.Errorf("warnings name %q:\n%s", not, got)
		}
	}
}

func TestPrefixes(t *testing.T) {
	f := NewFlagSet("x", env(map[string]string{"HMS_X_P": "10.252.1.7/17, 127.0.0.1,fd00::1, ::ffff:192.0.2.1"}), &bytes.Buffer{})
	p := f.Prefixes("p", "")
	if err := f.Parse(nil); err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{netip.MustParsePrefix("10.252.0.0/17"), netip.MustParsePrefix("127.0.0.1/32"),
		netip.MustParsePrefix("fd00::1/128"), netip.MustParsePrefix("192.0.2.1/32")}
	if diff := cmp.Diff(want, *p, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
		t.Errorf("prefixes (-want +got):\n%s", diff)
	}
}
