package integration

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hmsuite/hms/heartbeat/agent"
	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/pause"
	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/internal/redfishsim/fleetproc"
	"github.com/hmsuite/hms/orchestrator"
)

// The child processes of BenchmarkRebootSessionReal (bosbench_test.go): the
// test binary re-executed with one of these tests and an environment
// variable saying what to run. They are not tests: without the variable
// they skip.

// benchNodes is a fleet of simulated BMCs with a node behind each: a node
// powered on fetches its boot script from bss at once (iPXE), and starts
// heartbeating to hbtd boot after that (the kernel's boot); powered off, it
// stops. Each power change, boot-script fetch and first heartbeat is
// printed on events as "<kind> <node> <unix ns>".
type benchNodes struct {
	bss     string
	hc      *http.Client
	hbtd    *agent.Client
	boot    time.Duration
	events  chan string
	mu      sync.Mutex
	gen     map[string]int  // node -> power changes so far: a boot of an older one is stale
	beating map[string]bool // nodes that heartbeat
}

func (n *benchNodes) emit(kind, node string) {
	n.events <- fmt.Sprintf("%s %s %d", kind, node, time.Now().UnixNano())
}

// onPower runs under the BMC's lock: it only records the change and hands
// a boot to a goroutine.
func (n *benchNodes) onPower(ctx context.Context, bmc, state string) {
	node := bmc + "n0"
	n.mu.Lock()
	n.gen[node]++
	g := n.gen[node]
	delete(n.beating, node)
	n.mu.Unlock()
	go func() {
		n.emit(strings.ToLower(state), node)
		if state == "On" {
			n.bootNode(ctx, node, g)
		}
	}()
}

// bootNode fetches node's boot script (retrying while bss fails), waits the
// boot time, and then has it heartbeat, unless its power changed meanwhile.
func (n *benchNodes) bootNode(ctx context.Context, node string, g int) {
	for ctx.Err() == nil && n.current(node, g) {
		if err := fetchScript(ctx, n.hc, n.bss, node); err == nil {
			n.emit("script", node)
			break
		}
		pause.For(ctx, time.Second)
	}
	pause.For(ctx, n.boot)
	n.mu.Lock()
	ok := n.gen[node] == g
	if ok {
		n.beating[node] = true
	}
	n.mu.Unlock()
	if ok {
		n.emit("beat", node)
	}
}

func (n *benchNodes) current(node string, g int) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.gen[node] == g
}

func fetchScript(ctx context.Context, hc *http.Client, bss, node string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, bss+"/boot/v1/bootscript?name="+node, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("bootscript %s: %s", node, resp.Status)
	}
	return nil
}

// heartbeat sends one batch of heartbeats (POST /heartbeats) for the
// beating nodes every interval: the nodes' beats, carried 2,500 to a call
// as a relay would (hbtd's cost per beat is the same; the fleet's is less).
func (n *benchNodes) heartbeat(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		n.mu.Lock()
		hbs := make([]agent.Heartbeat, 0, len(n.beating))
		now := time.Now().Format(time.RFC3339)
		for node := range n.beating {
			hbs = append(hbs, agent.Heartbeat{Component: node, Status: "OK", TimeStamp: now})
		}
		n.mu.Unlock()
		if len(hbs) > 0 {
			_ = n.hbtd.Beats(ctx, hbs)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// TestBosBenchFleet serves one fleet of BenchmarkRebootSessionReal
// (HMS_BOS_BENCH_FLEET=<first>,<count>,<bss URL>,<hbtd URL>,<boot>,<beat
// interval>), as fleetproc describes, and prints the nodes' events after
// "ready".
func TestBosBenchFleet(t *testing.T) {
	spec := fleetproc.Child(t, "HMS_BOS_BENCH_FLEET", 4)
	p := spec.Args
	boot, _ := time.ParseDuration(p[2])
	every, _ := time.ParseDuration(p[3])
	_ = httpserver.RaiseFileLimit(slog.New(slog.DiscardHandler))
	ctx := fleetproc.StdinContext()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 30 * time.Second}
	n := &benchNodes{bss: p[0], hc: hc, hbtd: agent.NewClient(p[1], hc), boot: boot, events: make(chan string, 4096),
		gen: map[string]int{}, beating: map[string]bool{}}
	cfg := fleetproc.Config(spec.First, spec.Count, bmcPassword)
	cfg.OnPower = func(bmc, _, state string) { n.onPower(ctx, bmc, state) }
	fleet, err := redfishsim.NewFleet(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range fleet.Members() {
		n.beating[m.BMC.Xname()+"n0"] = true // on and booted at the start
	}
	if err := fleetproc.Announce(os.Stdout, fleet); err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(os.Stdout)
	go n.heartbeat(ctx, every)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case ev := <-n.events:
				fmt.Fprintln(w, ev)
				if len(n.events) == 0 {
					w.Flush()
				}
			}
		}
	}()
	_ = fleet.Run(ctx)
	os.Exit(0)
}

// TestBosBenchBos runs the bos of BenchmarkRebootSessionReal in its own
// process, so its CPU and memory are its own
// (HMS_BOS_BENCH_BOS=<hsm URL>,<bss URL>,<pcs URL>,<db file>): it prints
// "url <bos URL>" and serves until stdin closes.
func TestBosBenchBos(t *testing.T) {
	spec := os.Getenv("HMS_BOS_BENCH_BOS")
	if spec == "" {
		t.Skip("child process of BenchmarkRebootSessionReal")
	}
	p := strings.Split(spec, ",")
	ctx := fleetproc.StdinContext()
	level := slog.LevelWarn
	if os.Getenv("HMS_BOS_BENCH_LOG") != "" {
		level = slog.LevelDebug
	}
	d, err := orchestrator.StartDaemon(ctx, orchestrator.DaemonConfig{Listen: "127.0.0.1:0", DB: p[3], HSMURL: p[0],
		BSSURL: p[1], PCSURL: p[2], Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("url %s\n", d.URL())
	if err := d.Run(ctx); err != nil {
		t.Fatal(err)
	}
	os.Exit(0)
}
