package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/ipxe"
	"github.com/hmsuite/hms/ipxe/bss"
	bssclient "github.com/hmsuite/hms/ipxe/client"
	"github.com/hmsuite/hms/orchestrator"
	"github.com/hmsuite/hms/power"
	pcsclient "github.com/hmsuite/hms/power/client"
	"github.com/hmsuite/hms/power/pcs"
	"github.com/hmsuite/hms/statemgr"
	"github.com/hmsuite/hms/statemgr/client"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/inventory"
)

// bootCluster is the boot path's daemons in this process - hsm, bss, pcs
// and bos, each as its StartDaemon runs it - over simulated BMCs
// (redfishsim) that HSM walked, and a node behind each BMC that, powered
// on, fetches its boot script from bss and then reports Ready to HSM
// until it is powered off (hbagent's part, without hbtd).
//
// The BMCs are registered in HSM by the test, with their login, rather than
// found by reds through DHCP and SNMP as hms sim's are: the boot path is
// what is under test, and this keeps it to the daemons bos talks to.
type bootCluster struct {
	t      *testing.T
	fleet  *redfishsim.Fleet
	hsm    *client.Client
	bss    *bssclient.Client
	bssURL string
	pcs    *pcsclient.Client
	bosURL string
	images *httptest.Server

	opts   bootOptions
	hsmURL string
	pcsURL string
	// bosDB and bosAddr are where bos keeps its state and listens, the
	// same across restarts (HSM holds its SCN subscription to that address).
	bosDB, bosAddr string
	stopBos        func()

	mu    sync.Mutex
	nodes map[string]context.CancelFunc // node -> stops its heartbeat (powered on)
	boots map[string]int                // boot scripts fetched per node
	// held, while not nil, keeps powered-on nodes from fetching their boot
	// script until it is closed (release).
	held chan struct{}
}

// bootOptions tune a bootCluster.
type bootOptions struct {
	// bos changes bos's configuration before each start.
	bos func(*orchestrator.DaemonConfig)
	// pcsEvent is told of pcs's transition events.
	pcsEvent func(power.Event)
	// syncBoot: a node powered on boots (boot script, Ready) before its
	// BMC answers the reset, so before PCS confirms the power.
	syncBoot bool
}

const bmcPassword = "sim-pw"

func newBootCluster(t *testing.T, n int) *bootCluster { return newBootClusterWith(t, n, bootOptions{}) }

func newBootClusterWith(t *testing.T, n int, opts bootOptions) *bootCluster {
	t.Helper()
	ctx := t.Context()
	c := &bootCluster{t: t, opts: opts, nodes: map[string]context.CancelFunc{}, boots: map[string]int{}}
	fleet, err := redfishsim.NewFleet(redfishsim.FleetConfig{Count: n, Listen: "127.0.0.1:0", User: "root",
		Password: bmcPassword, Tree: redfishsim.TemplatePower(1), OnPower: c.onPower})
	if err != nil {
		t.Fatal(err)
	}
	c.fleet = fleet
	run(t, fleet.Run)
	dir := t.TempDir()
	hd, err := statemgr.StartDaemon(ctx, statemgr.DaemonConfig{Listen: "127.0.0.1:0", DB: filepath.Join(dir, "hsm.db"),
		CredKeyFile: filepath.Join(dir, "cred.key"), Discovery: inventory.DiscoveryConfig{PlainHTTP: true, Timeout: 10 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	run(t, hd.Run)
	c.hsm = client.New(hd.URL(), nil, "bos-test")
	bd, err := ipxe.StartDaemon(ctx, ipxe.DaemonConfig{Listen: "127.0.0.1:0", DB: filepath.Join(dir, "bss.db"), HSMURL: hd.URL()})
	if err != nil {
		t.Fatal(err)
	}
	run(t, bd.Run)
	c.bss, c.bssURL = bssclient.New(bd.URL(), nil), bd.URL()
	pd, err := power.StartDaemon(ctx, power.DaemonConfig{Listen: "127.0.0.1:0", DB: filepath.Join(dir, "pcs.db"),
		HSMURL: hd.URL(), Credentials: power.StaticCredentials{"default": {Username: "root", Password: bmcPassword}},
		BMCTimeout: 5 * time.Second, Service: power.Config{Scheme: "http", Poll: 50 * time.Millisecond, SampleInterval: time.Second,
			OnEvent: opts.pcsEvent}})
	if err != nil {
		t.Fatal(err)
	}
	run(t, pd.Run)
	c.pcs = pcsclient.New(pd.URL(), nil, "bos-test")
	c.hsmURL, c.pcsURL, c.bosDB, c.bosAddr = hd.URL(), pd.URL(), filepath.Join(dir, "bos.db"), "127.0.0.1:0"
	c.walk()
	c.startBos()
	c.images = httptest.NewServer(http.HandlerFunc(manifest))
	t.Cleanup(c.images.Close)
	t.Cleanup(c.stopNodes) // first: no node outlives the test
	return c
}

// stopNodes stops every running node's boot and heartbeat.
func (c *bootCluster) stopNodes() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for node, stop := range c.nodes {
		stop()
		delete(c.nodes, node)
	}
}

// startBos starts bos, on the database and the address of the bos before
// it after stopBos.
func (c *bootCluster) startBos() {
	c.t.Helper()
	cfg := orchestrator.DaemonConfig{Listen: c.bosAddr, DB: c.bosDB, HSMURL: c.hsmURL, BSSURL: c.bssURL, PCSURL: c.pcsURL,
		FallbackPoll: time.Second, Log: discard()}
	if c.opts.bos != nil {
		c.opts.bos(&cfg)
	}
	od, err := orchestrator.StartDaemon(c.t.Context(), cfg)
	if err != nil {
		c.t.Fatal(err)
	}
	c.bosURL, c.bosAddr = od.URL(), strings.TrimPrefix(od.URL(), "http://")
	ctx, cancel := context.WithCancel(context.WithoutCancel(c.t.Context()))
	done := make(chan error, 1)
	go func() { done <- od.Run(ctx) }()
	var once sync.Once
	c.stopBos = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				c.t.Errorf("bos: %v", err)
			}
		})
	}
	c.t.Cleanup(c.stopBos)
}

// run runs a daemon (or the fleet) until the test ends.
func run(t testing.TB, fn func(context.Context) error) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	done := make(chan error, 1)
	go func() { done <- fn(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
}

// manifest serves an IMS manifest for /<image>/manifest.json.
func manifest(w http.ResponseWriter, r *http.Request) {
	img := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/"), "/manifest.json")
	fmt.Fprintf(w, `{"version":"1.0","artifacts":[
		{"link":{"path":"s3://boot-images/%[1]s/kernel","type":"s3"},"type":"application/vnd.cray.image.kernel"},
		{"link":{"path":"s3://boot-images/%[1]s/initrd","type":"s3"},"type":"application/vnd.cray.image.initrd"},
		{"link":{"path":"s3://boot-images/%[1]s/rootfs","etag":"e-%[1]s","type":"s3"},"type":"application/vnd.cray.image.rootfs.squashfs"}]}`, img)
}

// walk registers every BMC in HSM and waits until HSM has walked them
// (their nodes are HSM components) and pcs answers for every node.
func (c *bootCluster) walk() {
	c.t.Helper()
	var eps []hsm.RedfishEndpoint
	for _, m := range c.fleet.Members() {
		eps = append(eps, hsm.RedfishEndpoint{ID: m.BMC.Xname(), FQDN: m.Addr, User: "root", Password: bmcPassword,
			RediscoverOnUpdate: true})
	}
	if err := c.hsm.CreateRedfishEndpoints(c.t.Context(), eps...); err != nil {
		c.t.Fatal(err)
	}
	if err := waitFor(c.t.Context(), time.Minute, func() (bool, error) {
		ps, err := c.pcs.PowerStatus(c.t.Context(), pcs.PowerStatusRequest{Xnames: c.nodeIDs()})
		return err == nil && len(ps) == len(eps) && !slices.ContainsFunc(ps, func(p pcs.PowerStatus) bool {
			return p.PowerState != pcs.PowerOn && p.PowerState != pcs.PowerOff
		}), nil
	}); err != nil {
		c.t.Fatalf("HSM walked the BMCs and pcs reads their power: %v", err)
	}
}

func (c *bootCluster) nodeIDs() []string {
	var out []string
	for _, m := range c.fleet.Members() {
		out = append(out, m.BMC.Xname()+"n0")
	}
	return out
}

// onPower is every BMC's power hook: a node powered on boots (in the
// background: the hook runs under the BMC's lock; with syncBoot before the
// hook returns), one powered off stops.
func (c *bootCluster) onPower(bmc, _, state string) {
	node := bmc + "n0"
	c.mu.Lock()
	if stop := c.nodes[node]; stop != nil {
		stop()
		delete(c.nodes, node)
	}
	if state != "On" {
		c.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(c.t.Context()))
	c.nodes[node] = cancel
	c.mu.Unlock()
	if c.opts.syncBoot {
		if c.fetch(ctx, node) == nil {
			go c.keepReady(ctx, node)
		}
		return
	}
	go c.boot(ctx, node)
}

// boot waits while nodes are held, fetches node's boot script from bss,
// then keeps the node Ready in HSM (as heartbeats would) until it is
// powered off.
func (c *bootCluster) boot(ctx context.Context, node string) {
	c.mu.Lock()
	held := c.held
	c.mu.Unlock()
	if held != nil {
		select {
		case <-held:
		case <-ctx.Done():
			return
		}
	}
	if c.fetch(ctx, node) == nil {
		c.keepReady(ctx, node)
	}
}

// fetch boots node: its boot script from bss, then Ready in HSM.
func (c *bootCluster) fetch(ctx context.Context, node string) error {
	if err := c.bootscript(ctx, node); err != nil {
		return err
	}
	c.mu.Lock()
	c.boots[node]++
	c.mu.Unlock()
	return c.hsm.StateData(ctx, node, hsm.StateReady, "", true)
}

func (c *bootCluster) keepReady(ctx context.Context, node string) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if comp, err := c.hsm.Component(ctx, node); err == nil && comp.State != hsm.StateReady {
			_ = c.hsm.StateData(ctx, node, hsm.StateReady, "", true)
		}
	}
}

func (c *bootCluster) bootscript(ctx context.Context, node string) error {
	return fetchScript(ctx, http.DefaultClient, c.bssURL, node)
}

// bos sends a request to bos and decodes its answer into out.
func (c *bootCluster) bos(method, path string, body, out any) {
	c.t.Helper()
	callBos(c.t, c.bosURL, method, path, body, out)
}

// callBos sends a request to the bos at url and decodes its answer into out.
func callBos(tb testing.TB, url, method, path string, body, out any) {
	tb.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(tb.Context(), method, url+path, rd)
	if err != nil {
		tb.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		tb.Fatalf("bos %s %s: %s %s", method, path, resp.Status, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			tb.Fatalf("bos %s %s: %v", method, path, err)
		}
	}
}

// runSession creates a session and waits until bos says it is complete;
// it returns the session's components as they end.
func (c *bootCluster) runSession(name, op string) []orchestrator.Component {
	c.t.Helper()
	c.bos("POST", "/v2/sessions", map[string]any{"name": name, "operation": op, "template_name": "compute"}, nil)
	return c.waitSession(name, op)
}

// waitSession waits until bos says session name is complete; it returns
// the session's components as they end.
func (c *bootCluster) waitSession(name, op string) []orchestrator.Component {
	c.t.Helper()
	var st orchestrator.ExtendedStatus
	if err := waitFor(c.t.Context(), 2*time.Minute, func() (bool, error) {
		c.bos("GET", "/v2/sessions/"+name+"/status", nil, &st)
		return st.Status == orchestrator.SessionComplete, nil
	}); err != nil {
		var comps []orchestrator.Component
		c.bos("GET", "/v2/components?session="+name, nil, &comps)
		c.t.Fatalf("session %s (%s) not complete: %+v; components %+v: %v", name, op, st, comps, err)
	}
	if st.PercentSuccessful != 100 || st.ManagedComponentsCount != len(c.nodeIDs()) || len(st.ErrorSummary) != 0 {
		c.t.Errorf("session %s: extended status %+v", name, st)
	}
	var comps []orchestrator.Component
	c.bos("GET", "/v2/components?session="+name, nil, &comps)
	for _, comp := range comps {
		if comp.Enabled || comp.Status.Phase != orchestrator.PhaseNone || comp.Status.Status != orchestrator.StatusStable || comp.Error != "" {
			c.t.Errorf("session %s: component %s ends %+v enabled=%v error=%q", name, comp.ID, comp.Status, comp.Enabled, comp.Error)
		}
	}
	return comps
}

// power is what pcs says of every node.
func (c *bootCluster) power() map[string]string {
	c.t.Helper()
	ps, err := c.pcs.PowerStatus(c.t.Context(), pcs.PowerStatusRequest{Xnames: c.nodeIDs()})
	if err != nil {
		c.t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range ps {
		out[p.Xname] = p.PowerState
	}
	return out
}

// TestBootRebootShutdown: a session template over three nodes, then a
// shutdown, a boot and a reboot session with the real hsm, bss, pcs and
// bos: bss holds the template's boot parameters with bos's referral token,
// the nodes are powered off, on and cycled, and every node and session ends
// complete and stable.
func TestBootRebootShutdown(t *testing.T) {
	c := newBootCluster(t, 3)
	nodes := c.nodeIDs()
	c.bos("PATCH", "/v2/options", map[string]any{"polling_frequency": 1, "max_power_off_wait_time": 20}, nil)
	c.bos("PUT", "/v2/sessiontemplates/compute", map[string]any{"enable_cfs": false, "boot_sets": map[string]any{
		"compute": map[string]any{"path": c.images.URL + "/img1/manifest.json", "type": "s3", "node_list": nodes,
			"kernel_parameters": "console=ttyS0", "rootfs_provider": "sbps", "rootfs_provider_passthrough": "sbps:v1:iqn"}}}, nil)

	c.runSession("off", orchestrator.OpShutdown)
	for n, p := range c.power() {
		if p != pcs.PowerOff {
			t.Errorf("after shutdown: %s is %s", n, p)
		}
	}

	comps := c.runSession("boot", orchestrator.OpBoot)
	wantParams := "console=ttyS0 root=sbps:s3://boot-images/img1/rootfs:e-img1:sbps:v1:iqn bos_session_id=boot"
	bps, err := c.bss.BootParams(t.Context(), bss.ParamsQuery{Names: nodes})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		i := slices.IndexFunc(bps, func(bp bss.BootParams) bool { return slices.Contains(bp.Hosts, n) })
		if i < 0 || bps[i].Kernel != "s3://boot-images/img1/kernel" || bps[i].Initrd != "s3://boot-images/img1/initrd" ||
			!strings.HasPrefix(bps[i].Params, wantParams) {
			t.Errorf("bss boot parameters of %s: %+v", n, bps)
		}
	}
	tokens := map[string]string{}
	for _, comp := range comps {
		a, d := comp.ActualState, comp.DesiredState
		if d.BSSToken == "" || a.BSSToken != d.BSSToken || a.BootArtifacts.Kernel != d.BootArtifacts.Kernel ||
			comp.LastAction.Action != orchestrator.ActionPowerOn {
			t.Errorf("after boot: %s actual %+v desired %+v last action %+v", comp.ID, a, d, comp.LastAction)
		}
		tokens[comp.ID] = a.BSSToken
	}
	states, err := c.hsm.QueryComponents(t.Context(), nodes)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range states {
		if s.State != hsm.StateReady {
			t.Errorf("after boot: HSM has %s %s", s.ID, s.State)
		}
	}

	comps = c.runSession("cycle", orchestrator.OpReboot)
	for _, comp := range comps {
		if comp.ActualState.BSSToken == tokens[comp.ID] || comp.ActualState.BSSToken != comp.DesiredState.BSSToken {
			t.Errorf("after reboot: %s booted token %q (before %q, desired %q)", comp.ID, comp.ActualState.BSSToken,
				tokens[comp.ID], comp.DesiredState.BSSToken)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range nodes {
		if c.boots[n] != 2 {
			t.Errorf("%s fetched its boot script %d times, want 2 (boot, reboot)", n, c.boots[n])
		}
	}
}
