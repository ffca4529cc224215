package power

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/httpserver"
	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/internal/redfishsim/fleetproc"
	"github.com/hmsuite/hms/power/pcs"
	"github.com/hmsuite/hms/statemgr"
	"github.com/hmsuite/hms/statemgr/client"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// The benchmark of issue 14: `on` for 10,000 simulated nodes behind 4
// fleets of 2,500 BMCs (each fleet its own process, as the file-descriptor
// limit of one process does not hold 10,000 listeners and both ends of
// their connections), every BMC answering after 1 s; then power-status of
// the 10,000 from the cache.
//
//	go test ./power -run '^$' -bench BenchmarkOn10k -benchtime 1x
//
// HMS_PCS_BENCH_NODES and HMS_PCS_BENCH_LATENCY change the size and the
// latency (a smaller run: HMS_PCS_BENCH_NODES=400).

const benchFleets = 4

// TestBenchFleet is not a test: it is the child process of BenchmarkOn10k
// serving one fleet (HMS_PCS_BENCH_FLEET=<first>,<count>,<latency>), as
// fleetproc describes.
func TestBenchFleet(t *testing.T) {
	spec := fleetproc.Child(t, "HMS_PCS_BENCH_FLEET", 1)
	latency, _ := time.ParseDuration(spec.Args[0])
	_ = httpserver.RaiseFileLimit(slog.New(slog.DiscardHandler))
	cfg := fleetproc.Config(spec.First, spec.Count, simPassword)
	cfg.Faults = redfishsim.Faults{Latency: latency}
	fleet, err := redfishsim.NewFleet(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := fleetproc.StdinContext()
	if err := fleetproc.Announce(os.Stdout, fleet); err != nil {
		t.Fatal(err)
	}
	_ = fleet.Run(ctx)
	os.Exit(0)
}

// startFleets starts the child processes and returns BMC xname -> address.
func startFleets(b *testing.B, nodes int, latency time.Duration) map[string]string {
	addrs := map[string]string{}
	per := nodes / benchFleets
	for k := range benchFleets {
		_, stdout := fleetproc.Start(b, "^TestBenchFleet$", "HMS_PCS_BENCH_FLEET="+fleetproc.Spec{First: k * per, Count: per, Args: []string{latency.String()}}.String())
		fleetproc.ReadAddrs(stdout, addrs)
		go func() {
			for stdout.Scan() {
			}
		}()
	}
	if len(addrs) != per*benchFleets {
		b.Fatalf("fleets started %d BMCs, want %d", len(addrs), per*benchFleets)
	}
	return addrs
}

func benchEnvInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func BenchmarkOn10k(b *testing.B) {
	nodes := benchEnvInt("HMS_PCS_BENCH_NODES", 10000)
	latency := time.Second
	if v, err := time.ParseDuration(os.Getenv("HMS_PCS_BENCH_LATENCY")); err == nil {
		latency = v
	}
	_ = httpserver.RaiseFileLimit(slog.New(slog.DiscardHandler))
	ctx := b.Context()
	addrs := startFleets(b, nodes, latency)
	dir := b.TempDir()
	hd, err := statemgr.StartDaemon(ctx, statemgr.DaemonConfig{Listen: "127.0.0.1:0", DB: filepath.Join(dir, "hsm.db"),
		CredKeyFile: filepath.Join(dir, "cred.key")})
	if err != nil {
		b.Fatal(err)
	}
	hctx, hcancel := context.WithCancel(ctx)
	hdone := make(chan error, 1)
	go func() { hdone <- hd.Run(hctx) }()
	b.Cleanup(func() { hcancel(); <-hdone })
	hc := client.New(hd.URL(), nil, "bench")
	var eps []hsm.RedfishEndpoint
	var comps []hsm.Component
	var ids []string
	for x, addr := range addrs {
		eps = append(eps, hsm.RedfishEndpoint{ID: x, FQDN: addr})
		comps = append(comps, hsm.Component{ID: x + "n0", Type: "Node", State: "On"})
		ids = append(ids, x+"n0")
	}
	slices.Sort(ids)
	if err := hc.CreateRedfishEndpoints(ctx, eps...); err != nil {
		b.Fatal(err)
	}
	if err := hc.PostComponents(ctx, comps, false); err != nil {
		b.Fatal(err)
	}
	pd, err := StartDaemon(ctx, DaemonConfig{Listen: "127.0.0.1:0", DB: filepath.Join(dir, "pcs.db"), HSMURL: hd.URL(),
		Credentials: StaticCredentials{"default": {Username: "root", Password: simPassword}},
		Service:     Config{Scheme: "http", Poll: time.Second, SampleInterval: time.Hour}})
	if err != nil {
		b.Fatal(err)
	}
	pctx, pcancel := context.WithCancel(ctx)
	pdone := make(chan error, 1)
	go func() { pdone <- pd.Run(pctx) }()
	b.Cleanup(func() { pcancel(); <-pdone })
	svc := pd.Service()
	run := func(op pcs.Operation) (time.Duration, pcs.TaskCounts) {
		start := time.Now()
		tr, err := svc.Create(ctx, op, 5, locs(ids...))
		if err != nil {
			b.Fatal(err)
		}
		if err := svc.Wait(ctx, tr.ID); err != nil {
			b.Fatal(err)
		}
		took := time.Since(start)
		done, counts, _ := svc.Get(tr.ID)
		for _, t := range done.Tasks {
			if t.Status != pcs.TaskSucceeded {
				b.Logf("%s %s: %s %s: %s", op, t.Xname, t.Status, t.Description, t.Error)
			}
		}
		return took, counts
	}
	// Off first (untimed by the target; it also finds each BMC's system).
	offTook, offCounts := run(pcs.OpForceOff)
	b.ResetTimer()
	onTook, onCounts := run(pcs.OpOn)
	b.StopTimer()
	// A force-off task that failed (a BMC request timed out on a loaded
	// machine) leaves its node on; on then finds it already on.
	if onCounts.Succeeded != nodes {
		b.Fatalf("force-off %+v, on %+v; want %d succeeded", offCounts, onCounts, nodes)
	}
	pd.bmc.Close() // its idle BMC connections: the ceiling opens its own
	ceiling := bareOn(b, addrs, 4000)
	b.ReportMetric(offTook.Seconds(), "s-force-off")
	b.ReportMetric(onTook.Seconds(), "s-on")
	b.ReportMetric(ceiling.Seconds(), "s-ceiling-on")
	b.ReportMetric(ceiling.Seconds()/onTook.Seconds(), "ratio-on")
	raw := fetch(b, pd.URL()+"/power-status")
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(raw)
	}))
	defer bare.Close()
	p99, bareP99 := statusP99(b, pd.URL()+"/power-status", bare.URL, nodes)
	b.ReportMetric(p99.Seconds()*1000, "ms-p99-status")
	b.ReportMetric(bareP99.Seconds()*1000, "ms-p99-ceiling-status")
	b.ReportMetric(bareP99.Seconds()/p99.Seconds(), "ratio-status")
}

// bareOn is the ceiling of the on transition: the least the same traffic
// needs, a bare client sending each BMC the three requests a task sends (read
// the system, POST ComputerSystem.Reset On, read it back), with pcs's
// bounds (4 connections per BMC, global requests in flight).
func bareOn(b *testing.B, addrs map[string]string, global int) time.Duration {
	hc := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 4, MaxIdleConnsPerHost: 4}}
	defer hc.CloseIdleConnections()
	work := make(chan string)
	var wg sync.WaitGroup
	var failed atomic.Int64
	var first atomic.Pointer[error]
	start := time.Now()
	for range global {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for addr := range work {
				base := "http://" + addr + "/redfish/v1/Systems/Node0"
				for _, r := range []struct{ method, url, body string }{{"GET", base, ""},
					{"POST", base + "/Actions/ComputerSystem.Reset", `{"ResetType":"On"}`}, {"GET", base, ""}} {
					req, _ := http.NewRequest(r.method, r.url, strings.NewReader(r.body))
					req.SetBasicAuth("root", simPassword)
					resp, err := hc.Do(req)
					if err != nil {
						failed.Add(1)
						first.CompareAndSwap(nil, &err)
						continue
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
		}()
	}
	for _, addr := range addrs {
		work <- addr
	}
	close(work)
	wg.Wait()
	if failed.Load() > 0 {
		b.Fatalf("bare client: %d requests failed, first: %v", failed.Load(), *first.Load())
	}
	return time.Since(start)
}

func fetch(b *testing.B, url string) []byte {
	resp, err := http.Get(url)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

// statusP99 is the p99 latency of GET pcs and GET bare (every node's power
// status from pcs, the same bytes from a bare handler) over 100 requests
// each, alternating, so both see the same machine (a process busy after a
// transition, the other engineers' load); each is timed until the last
// byte of the answer is read (and dropped: the client's buffer growth is not
// the server's time). pcs's answer is fetched and decoded once more,
// outside the timing, to check it.
func statusP99(b *testing.B, pcsURL, bareURL string, nodes int) (p99, bareP99 time.Duration) {
	var took, bareTook []time.Duration
	get := func(url string) time.Duration {
		start := time.Now()
		resp, err := http.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	for range 100 {
		took = append(took, get(pcsURL))
		bareTook = append(bareTook, get(bareURL))
	}
	var body struct{ Status []pcs.PowerStatus }
	if err := json.Unmarshal(fetch(b, pcsURL), &body); err != nil || len(body.Status) != nodes {
		b.Fatalf("power-status: %d entries, %v", len(body.Status), err)
	}
	slices.Sort(took)
	slices.Sort(bareTook)
	return took[98], bareTook[98]
}
