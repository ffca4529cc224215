package ctl_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hmsuite/hms/ctl"
	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/power"
	"github.com/hmsuite/hms/power/pcs"
	"github.com/hmsuite/hms/statemgr"
	"github.com/hmsuite/hms/statemgr/client"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// powerSuite runs n simulated BMCs (one node each), an HSM that knows the
// nodes and the BMCs' endpoints without walking them (pcs then finds node
// n0 as the BMC's first system), and a pcs; it returns HSM's and pcs's
// URLs and the nodes.
func powerSuite(t *testing.T, n int) (hsmURL, pcsURL string, nodes []string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var done []chan error
	t.Cleanup(func() {
		cancel()
		for _, d := range done {
			<-d
		}
	})
	run := func(r func(context.Context) error) {
		d := make(chan error, 1)
		done = append(done, d)
		go func() { d <- r(ctx) }()
	}
	fleet, err := redfishsim.NewFleet(redfishsim.FleetConfig{Count: n, Listen: "127.0.0.1:0", Tree: redfishsim.TemplatePower(1),
		User: "root", Password: "pw"})
	mustOK(t, err)
	run(fleet.Run)
	dir := t.TempDir()
	hd, err := statemgr.StartDaemon(ctx, statemgr.DaemonConfig{Listen: "127.0.0.1:0", DB: filepath.Join(dir, "hsm.db"),
		CredKeyFile: filepath.Join(dir, "cred.key")})
	mustOK(t, err)
	run(hd.Run)
	h := client.New(hd.URL(), nil, "test")
	var comps []hsm.Component
	for _, m := range fleet.Members() {
		mustOK(t, h.CreateRedfishEndpoints(t.Context(), hsm.RedfishEndpoint{ID: m.BMC.Xname(), FQDN: m.Addr, User: "root", Password: "pw"}))
		nodes = append(nodes, m.BMC.Xname()+"n0")
		comps = append(comps, hsm.Component{ID: m.BMC.Xname() + "n0", State: "On", Role: "Compute"})
	}
	mustOK(t, h.PostComponents(t.Context(), comps, false))
	pd, err := power.StartDaemon(ctx, power.DaemonConfig{Listen: "127.0.0.1:0", DB: filepath.Join(dir, "pcs.db"), HSMURL: hd.URL(),
		Credentials: power.StaticCredentials{"default": {Username: "root", Password: "pw"}}, BMCTimeout: 5 * time.Second,
		Service: power.Config{Scheme: "http", Poll: 10 * time.Millisecond, SampleInterval: time.Hour}})
	mustOK(t, err)
	run(pd.Run)
	return hd.URL(), pd.URL(), nodes
}

// instant is a Sleep that returns at once: the CLI asks pcs again without
// waiting on the real clock.
func instant(ctx context.Context, _ time.Duration) error { return ctx.Err() }

// TestPower: hms power off (flags after the xnames), on by -group and
// status, pcs found through HMS_PCS_URL or -pcs-url like every daemon.
func TestPower(t *testing.T) {
	hsmURL, pcsURL, nodes := powerSuite(t, 2)
	e := env(t, map[string]string{"HMS_PCS_URL": pcsURL, "HMS_HSM_URL": hsmURL})
	o := ctl.Options{Getenv: e, Sleep: instant}

	r := hmsWith(t, o, "power", "off", nodes[0], nodes[1], "-force")
	if r.err != nil || !strings.Contains(r.stderr, "Force-Off") {
		t.Fatalf("power off: %v\n%s%s", r.err, r.stdout, r.stderr)
	}
	for _, n := range nodes {
		if !strings.Contains(r.stdout, n+"  succeeded  Transition confirmed, forceoff") {
			t.Errorf("power off printed:\n%s", r.stdout)
		}
	}
	var st []pcs.PowerStatus
	hmsJSON(t, e, &st, "power", "status", nodes[0], nodes[1])
	if len(st) != 2 || st[0].PowerState != pcs.PowerOff || st[1].PowerState != pcs.PowerOff {
		t.Errorf("power status: %+v", st)
	}

	resp, err := http.Post(hsmURL+"/hsm/v2/groups", "application/json",
		strings.NewReader(`{"label":"blue","members":{"ids":["`+nodes[1]+`"]}}`))
	mustOK(t, err)
	resp.Body.Close()
	var tr pcs.Transition
	hmsJSONWith(t, ctl.Options{Getenv: env(t, nil), Sleep: instant}, &tr, "power", "on", "-group", "blue", "-pcs-url", pcsURL, "-hsm-url", hsmURL)
	if len(tr.Tasks) != 1 || tr.Tasks[0].Xname != nodes[1] || tr.Tasks[0].Status != pcs.TaskSucceeded {
		t.Errorf("power on -group: %+v", tr)
	}
	r = hms(t, e, "power", "status", nodes[0], nodes[1], "-o", "wide")
	if r.err != nil || !strings.Contains(r.stdout, nodes[0]+"  off") || !strings.Contains(r.stdout, nodes[1]+"  on") ||
		!strings.Contains(r.stdout, "TRANSITIONS") {
		t.Errorf("power status -o wide: %v\n%s", r.err, r.stdout)
	}

	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{args: []string{"power", "on"}, code: 2, want: "name components (XNAME...) or -group"},
		{args: []string{"power", "on", "bad1"}, code: 2, want: `"bad1" is not an xname`},
		{args: []string{"power", "on", "x9999c0s0b0n0"}, code: 1, want: "x9999c0s0b0n0"},
		{args: []string{"power", "sideways", nodes[0]}, code: 2, want: "want one of on, off, reset, status"},
	} {
		r := hmsWith(t, o, tc.args...)
		if r.code() != tc.code || r.err == nil || !strings.Contains(r.err.Error(), tc.want) {
			t.Errorf("hms %s: exit %d %v, want %d naming %q", strings.Join(tc.args, " "), r.code(), r.err, tc.code, tc.want)
		}
	}
}

// hmsJSONWith is hmsJSON with options o.
func hmsJSONWith(t *testing.T, o ctl.Options, v any, args ...string) {
	t.Helper()
	r := hmsWith(t, o, append(args, "-o", "json")...)
	if r.err != nil {
		t.Fatalf("hms %s: %v (stderr %q)", strings.Join(args, " "), r.err, r.stderr)
	}
	mustOK(t, jsonUnmarshal(r.stdout, v))
}
