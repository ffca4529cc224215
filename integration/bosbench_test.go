package integration

import (
	"bufio"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hmsuite/hms/heartbeat"
	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/internal/redfishsim/fleetproc"
	"github.com/hmsuite/hms/ipxe"
	"github.com/hmsuite/hms/orchestrator"
	"github.com/hmsuite/hms/power"
	pcsclient "github.com/hmsuite/hms/power/client"
	"github.com/hmsuite/hms/power/pcs"
	"github.com/hmsuite/hms/statemgr"
	"github.com/hmsuite/hms/statemgr/client"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// BenchmarkRebootSessionReal is issue 16's benchmark against the real
// daemons: a reboot session over HMS_BOS_BENCH_NODES (default 1,000) nodes
// of role Compute, from POST /v2/sessions to the session complete.
//
//	HMS_BOS_BENCH_NODES=10000 go test ./integration -run '^$' -bench RebootSessionReal -benchtime 1x
//
// hsm, bss, pcs and hbtd run in this process on SQLite (defaults as their
// binaries have them, HSM given the nodes and their BMCs rather than
// walking them); bos runs in its own process (the test binary again) so
// its CPU and memory are its own; the BMCs (internal/redfishsim, one node
// each) and their nodes run in child processes of 2,500 (bosbench_child_test.go).
// A node powered on fetches its boot script from bss by name, boots for
// HMS_BOS_BENCH_BOOT (default 4 s) and then heartbeats to hbtd every
// 500 ms; hbtd (Warntime 2.5 s, Errtime 5 s) tells HSM it is Ready. A
// boot shorter than Warntime works too (HMS_BOS_BENCH_BOOT=1s: 1,000
// nodes in 5.1 s at load 5.5): hbtd forgets a node HSM says was powered
// off or on, so its first heartbeat after the reboot makes it Ready (until
// bfa04a2 such a node was never reported Ready again, as with CSM's hbtd).
//
// Metrics: the session's wall time, and per phase the moment the last node
// did each thing, from the session's creation (the BMCs' power-off and
// power-on, the boot-script fetches, the first heartbeats); the CPU of bos,
// of the daemons' process (hsm, bss, pcs, hbtd and this driver) and of the
// simulator processes; bos's peak RSS.
func BenchmarkRebootSessionReal(b *testing.B) {
	n := benchInt("HMS_BOS_BENCH_NODES", 1000)
	boot := benchDuration("HMS_BOS_BENCH_BOOT", 4*time.Second)
	_ = httpserver.RaiseFileLimit(slog.New(slog.DiscardHandler))
	bb := startBosBench(b, n, boot)
	bb.bos("PUT", "/v2/sessiontemplates/all", map[string]any{"enable_cfs": false, "boot_sets": map[string]any{
		"c": map[string]any{"path": bb.images + "/img1/manifest.json", "type": "s3", "node_roles_groups": []string{"Compute"},
			"kernel_parameters": "console=ttyS0", "rootfs_provider": "sbps", "rootfs_provider_passthrough": "sbps:v1:iqn"}}}, nil)
	var sum map[string]float64
	runs := 0
	for b.Loop() {
		runs++
		m := bb.session(fmt.Sprintf("r%d", runs))
		if sum == nil {
			sum = map[string]float64{}
		}
		for k, v := range m {
			sum[k] += v
		}
	}
	keys := make([]string, 0, len(sum))
	for k := range sum {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b.ReportMetric(sum[k]/float64(runs), k)
	}
	b.ReportMetric(bb.rss(bb.bosPID), "MiB-bos-peak-rss")
	b.ReportMetric(bb.rss(os.Getpid()), "MiB-daemons-peak-rss")
}

// bosBench is the running benchmark: the daemons, the children, and what
// the fleets report.
type bosBench struct {
	b      *testing.B
	n      int
	bosURL string
	images string
	bosPID int
	sims   []int // the fleets' PIDs

	mu     sync.Mutex
	events map[string]map[string]time.Time // kind -> node -> when, this session
}

func startBosBench(b *testing.B, n int, boot time.Duration) *bosBench {
	ctx := b.Context()
	dir := b.TempDir()
	bb := &bosBench{b: b, n: n, events: map[string]map[string]time.Time{}}
	hd, err := statemgr.StartDaemon(ctx, statemgr.DaemonConfig{Listen: "127.0.0.1:0", DB: filepath.Join(dir, "hsm.db"),
		CredKeyFile: filepath.Join(dir, "cred.key")})
	if err != nil {
		b.Fatal(err)
	}
	run(b, hd.Run)
	hb, err := heartbeat.StartDaemon(ctx, "127.0.0.1:0", heartbeat.Options{DBPath: filepath.Join(dir, "hbtd.db"),
		HSMURL: hd.URL(), Warntime: 2500 * time.Millisecond, Errtime: 5 * time.Second, Interval: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	run(b, hb.Run)
	bd, err := ipxe.StartDaemon(ctx, ipxe.DaemonConfig{Listen: "127.0.0.1:0", DB: filepath.Join(dir, "bss.db"), HSMURL: hd.URL()})
	if err != nil {
		b.Fatal(err)
	}
	// HSM has the nodes before they heartbeat (hbtd would have their
	// beats refused), their BMCs once the simulators say where they are.
	hc := client.New(hd.URL(), nil, "bench")
	comps := make([]hsm.Component, n)
	ids := make([]string, n)
	for i := range n {
		ids[i] = redfishsim.DefaultXname(i) + "n0"
		comps[i] = hsm.Component{ID: ids[i], Type: "Node", State: hsm.StateReady, Role: "Compute"}
	}
	if err := hc.PostComponents(ctx, comps, true); err != nil {
		b.Fatal(err)
	}
	var eps []hsm.RedfishEndpoint
	for x, addr := range bb.startFleets(bd.URL(), hb.URL(), boot) {
		eps = append(eps, hsm.RedfishEndpoint{ID: x, FQDN: addr})
	}
	if err := hc.CreateRedfishEndpoints(ctx, eps...); err != nil {
		b.Fatal(err)
	}
	run(b, bd.Run)
	pd, err := power.StartDaemon(ctx, power.DaemonConfig{Listen: "127.0.0.1:0", DB: filepath.Join(dir, "pcs.db"),
		HSMURL: hd.URL(), Credentials: power.StaticCredentials{"default": {Username: "root", Password: bmcPassword}},
		Service: power.Config{Scheme: "http"}})
	if err != nil {
		b.Fatal(err)
	}
	run(b, pd.Run)
	pc := pcsclient.New(pd.URL(), nil, "bench")
	if err := waitFor(ctx, 5*time.Minute, func() (bool, error) {
		ps, err := pc.PowerStatus(ctx, pcs.PowerStatusRequest{Xnames: ids})
		return err == nil && len(ps) == n && !slices.ContainsFunc(ps, func(p pcs.PowerStatus) bool {
			return p.PowerState != pcs.PowerOn
		}), nil
	}); err != nil {
		b.Fatalf("pcs reads every node on: %v", err)
	}
	bb.startBos(hd.URL(), bd.URL(), pd.URL(), filepath.Join(dir, "bos.db"))
	if err := waitFor(ctx, time.Minute, func() (bool, error) {
		subs, err := hc.Subscriptions(ctx)
		return err == nil && slices.ContainsFunc(subs, func(s hsm.Subscription) bool {
			return strings.HasPrefix(s.Url, bb.bosURL)
		}), nil
	}); err != nil {
		b.Fatalf("bos subscribed to HSM's SCNs: %v", err)
	}
	images := httptest.NewServer(http.HandlerFunc(manifest))
	b.Cleanup(images.Close)
	bb.images = images.URL
	return bb
}

// benchFleet is how many BMCs one simulator process serves: one process
// cannot hold 10,000 listeners and both ends of their connections under the
// file-descriptor limit (as power's BenchmarkOn10k).
const benchFleet = 2500

// startFleets starts the simulator processes; it returns BMC xname ->
// address and follows their events.
func (bb *bosBench) startFleets(bssURL, hbtdURL string, boot time.Duration) map[string]string {
	addrs := map[string]string{}
	for first := 0; first < bb.n; first += benchFleet {
		count := min(benchFleet, bb.n-first)
		spec := fleetproc.Spec{First: first, Count: count, Args: []string{bssURL, hbtdURL, boot.String(), (500 * time.Millisecond).String()}}
		cmd, out := fleetproc.Start(bb.b, "^TestBosBenchFleet$", "HMS_BOS_BENCH_FLEET="+spec.String())
		bb.sims = append(bb.sims, cmd.Process.Pid)
		fleetproc.ReadAddrs(out, addrs)
		go bb.follow(out)
	}
	if len(addrs) != bb.n {
		bb.b.Fatalf("simulators started %d BMCs, want %d", len(addrs), bb.n)
	}
	return addrs
}

// follow records a fleet's events: "<kind> <node> <unix ns>".
func (bb *bosBench) follow(sc *bufio.Scanner) {
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 {
			continue
		}
		ns, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			continue
		}
		bb.mu.Lock()
		if bb.events[f[0]] == nil {
			bb.events[f[0]] = map[string]time.Time{}
		}
		bb.events[f[0]][f[1]] = time.Unix(0, ns)
		bb.mu.Unlock()
	}
}

func (bb *bosBench) startBos(hsmURL, bssURL, pcsURL, db string) {
	cmd, out := fleetproc.Start(bb.b, "^TestBosBenchBos$", fmt.Sprintf("HMS_BOS_BENCH_BOS=%s,%s,%s,%s", hsmURL, bssURL, pcsURL, db))
	bb.bosPID = cmd.Process.Pid
	for out.Scan() {
		if u, ok := strings.CutPrefix(out.Text(), "url "); ok {
			bb.bosURL = u
			break
		}
	}
	if bb.bosURL == "" {
		bb.b.Fatal("bos did not start")
	}
	go func() {
		for out.Scan() { // bos prints nothing more; keep its pipe drained
		}
	}()
}

// session runs one reboot session over every node and returns its metrics.
func (bb *bosBench) session(name string) map[string]float64 {
	b := bb.b
	bb.mu.Lock()
	bb.events = map[string]map[string]time.Time{}
	bb.mu.Unlock()
	pids := append([]int{bb.bosPID, os.Getpid()}, bb.sims...)
	cpu0 := make([]float64, len(pids))
	for i, pid := range pids {
		cpu0[i] = procCPU(pid)
	}
	start := time.Now()
	bb.bos("POST", "/v2/sessions", map[string]any{"name": name, "operation": orchestrator.OpReboot, "template_name": "all"}, nil)
	var running time.Time
	var st orchestrator.ExtendedStatus
	deadline := start.Add(time.Duration(bb.n)*50*time.Millisecond + 5*time.Minute)
	for {
		var sess orchestrator.Session
		bb.bos("GET", "/v2/sessions/"+name, nil, &sess)
		if running.IsZero() && sess.Status.Status != orchestrator.SessionPending {
			running = time.Now()
		}
		if sess.Status.Status == orchestrator.SessionComplete {
			break
		}
		if time.Now().After(deadline) {
			bb.bos("GET", "/v2/sessions/"+name+"/status", nil, &st)
			b.Fatalf("session %s not complete after %s: %+v; fleet events %v", name, time.Since(start), st, bb.counts())
		}
		time.Sleep(200 * time.Millisecond)
	}
	took := time.Since(start)
	bb.bos("GET", "/v2/sessions/"+name+"/status", nil, &st)
	if st.PercentSuccessful != 100 || st.ManagedComponentsCount != bb.n {
		b.Fatalf("session %s: %+v", name, st)
	}
	m := map[string]float64{"s-session": took.Seconds(), "s-setup": running.Sub(start).Seconds()}
	for _, kind := range []string{"off", "on", "script", "beat"} {
		times := bb.times(kind)
		if len(times) != bb.n {
			b.Fatalf("session %s: %d nodes did %q, want %d (%v)", name, len(times), kind, bb.n, bb.counts())
		}
		m["s-"+kind+"-first"] = times[0].Sub(start).Seconds()
		m["s-"+kind+"-p50"] = times[len(times)/2].Sub(start).Seconds()
		m["s-"+kind+"-last"] = times[len(times)-1].Sub(start).Seconds()
	}
	for i, what := range []string{"cpu-s-bos", "cpu-s-daemons"} {
		m[what] = procCPU(pids[i]) - cpu0[i]
	}
	for i := 2; i < len(pids); i++ {
		m["cpu-s-sim"] += procCPU(pids[i]) - cpu0[i]
	}
	return m
}

// times are when the nodes did kind this session, in order.
func (bb *bosBench) times(kind string) []time.Time {
	bb.mu.Lock()
	defer bb.mu.Unlock()
	out := make([]time.Time, 0, len(bb.events[kind]))
	for _, t := range bb.events[kind] {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
	return out
}

func (bb *bosBench) counts() map[string]int {
	bb.mu.Lock()
	defer bb.mu.Unlock()
	out := map[string]int{}
	for k, v := range bb.events {
		out[k] = len(v)
	}
	return out
}

// bos sends a request to bos and decodes its answer into out.
func (bb *bosBench) bos(method, path string, body, out any) {
	callBos(bb.b, bb.bosURL, method, path, body, out)
}

// procCPU is the CPU seconds (user and system) process pid has used, from
// /proc/<pid>/stat (clock ticks of 1/100 s, Linux's USER_HZ).
func procCPU(pid int) float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / 100
}

// rss is process pid's peak resident memory (VmHWM) in MiB.
func (bb *bosBench) rss(pid int) float64 {
	raw, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

func benchInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func benchDuration(name string, def time.Duration) time.Duration {
	if v, err := time.ParseDuration(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
