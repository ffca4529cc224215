package redfish

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// simBMC returns a client reaching, in process, a simulated BMC serving a
// generated tree of n systems with the given faults.
func simBMC(t testing.TB, xname string, n int, f redfishsim.Faults) *http.Client {
	t.Helper()
	bmc, err := redfishsim.New(redfishsim.Config{Xname: xname, Tree: redfishsim.Generate(xname, n),
		User: "root", Password: "sim-pass", Faults: f})
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Transport: inProcess{bmc}}
}

// TestWalkSimulator walks the project's BMC simulator (generated trees, with
// and without injected faults), a second Redfish implementation besides the
// DMTF mockups.
func TestWalkSimulator(t *testing.T) {
	const bmc = "x3000c0s7b0"
	for _, tc := range []struct {
		name     string
		faults   redfishsim.Faults
		password string
		want     Status
		missing  string // a substring expected in Result.Missing
	}{
		{name: "healthy", want: StatusOK},
		{name: "wrong password", password: "nope", want: StatusVerificationFailed},
		{name: "garbage systems", faults: redfishsim.Faults{GarbagePaths: []string{"/redfish/v1/Systems/*"}},
			want: StatusDecodeFailed},
		{name: "500 on managers", faults: redfishsim.Faults{ErrorPaths: []string{"/redfish/v1/Managers"}},
			want: StatusHTTPsGetFailed},
		{name: "no EthernetInterfaces", want: StatusOK, missing: "EthernetInterfaces (",
			faults: redfishsim.Faults{MissingPaths: []string{"/redfish/v1/Systems/*/EthernetInterfaces"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pw := cmpOr(tc.password, "sim-pass")
			c := &bodyCounter{base: simBMC(t, bmc, 2, tc.faults).Transport}
			res, _ := Walk(t.Context(), Endpoint{ID: bmc, FQDN: bmc, User: "root", Password: pw, Scheme: "http"},
				Options{HTTPClient: &http.Client{Transport: c}})
			if res.Status != tc.want {
				t.Fatalf("Status = %s, want %s (errors %q)", res.Status, tc.want, res.Errors)
			}
			if tc.missing != "" && !strings.Contains(strings.Join(res.Missing, "\n"), tc.missing) {
				t.Errorf("Missing = %q, want an entry with %q", res.Missing, tc.missing)
			}
			if c.closed != c.opened {
				t.Errorf("%d bodies opened, %d closed", c.opened, c.closed)
			}
			if tc.want == StatusOK {
				checkSimNodes(t, bmc, 2, res)
			}
		})
	}
}

// checkSimNodes checks that every generated system became a node with a
// Reset action and at least one MAC assigned to it.
func checkSimNodes(t *testing.T, bmc string, n int, res Result) {
	t.Helper()
	ces := map[string]hsm.ComponentEndpoint{}
	for _, ce := range res.ComponentEndpoints {
		ces[ce.ID] = ce
	}
	macs := map[string]int{}
	for _, e := range res.EthernetInterfaces {
		macs[e.ComponentID]++
	}
	for i := range n {
		id := fmt.Sprintf("%sn%d", bmc, i)
		ce, ok := ces[id]
		if !ok || ce.RedfishSystemInfo == nil || ce.RedfishSystemInfo.Actions == nil ||
			ce.RedfishSystemInfo.Actions.Reset == nil || ce.RedfishSystemInfo.Actions.Reset.Target == "" {
			t.Errorf("%s: no ComponentEndpoint with a Reset action: %+v", id, ce)
		}
		if len(res.Missing) == 0 && macs[id] == 0 {
			t.Errorf("%s: no EthernetInterface", id)
		}
	}
	if _, ok := ces[bmc]; !ok {
		t.Errorf("no ComponentEndpoint for the BMC %s", bmc)
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TestWalkSimulatorHang uses the simulator's hang fault: the walk ends at its
// timeout with HTTPsGetFailed while a healthy BMC walked at the same time
// finishes at once.
func TestWalkSimulatorHang(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hung := simBMC(t, "x3000c0s1b0", 1, redfishsim.Faults{Hang: true})
		ok := simBMC(t, "x3000c0s2b0", 1, redfishsim.Faults{})
		start := time.Now()
		var wg sync.WaitGroup
		var hres, ores Result
		var htook, otook time.Duration
		wg.Go(func() {
			hres, _ = Walk(t.Context(), Endpoint{ID: "x3000c0s1b0", FQDN: "a", User: "root", Password: "sim-pass", Scheme: "http"},
				Options{Timeout: 10 * time.Second, HTTPClient: hung})
			htook = time.Since(start)
		})
		wg.Go(func() {
			ores, _ = Walk(t.Context(), Endpoint{ID: "x3000c0s2b0", FQDN: "b", User: "root", Password: "sim-pass", Scheme: "http"},
				Options{Timeout: 10 * time.Second, HTTPClient: ok})
			otook = time.Since(start)
		})
		wg.Wait()
		if hres.Status != StatusHTTPsGetFailed || htook != 10*time.Second {
			t.Errorf("hung BMC: %s after %v, want HTTPsGetFailed after 10s", hres.Status, htook)
		}
		if ores.Status != StatusOK || otook != 0 {
			t.Errorf("healthy BMC: %s after %v, want DiscoverOK at once (errors %q)", ores.Status, otook, ores.Errors)
		}
	})
}

// BenchmarkWalkFleet walks 1,000 simulated BMCs (one node each, generated
// model, each on its own loopback port) with 100 walks at a time: the walk
// part of the 1,000-BMC discovery target. The per-BMC timeout is
// raised to 5 minutes so that a loaded machine slows the run down instead of
// failing it.
func BenchmarkWalkFleet(b *testing.B) {
	const bmcs, workers = 1000, 100
	fleet, err := redfishsim.NewFleet(redfishsim.FleetConfig{Count: bmcs, Listen: "127.0.0.1:0",
		Tree: redfishsim.Template(1), User: "root", Password: "sim-pass"})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(b.Context())
	done := make(chan error, 1)
	go func() { done <- fleet.Run(ctx) }()
	defer func() { cancel(); <-done }()
	members := fleet.Members()
	for b.Loop() {
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		failed, requests, why := walkAll(b, members, workers)
		elapsed := time.Since(start)
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		if failed > 0 {
			b.Fatalf("%d of %d walks failed: %v", failed, bmcs, why)
		}
		b.ReportMetric(elapsed.Seconds(), "s/1000bmcs")
		b.ReportMetric(float64(requests)/bmcs, "requests/bmc")
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/bmcs/1024, "KiB-alloc/bmc")
		b.ReportMetric(float64(after.Sys)/(1<<20), "MiB-sys")
	}
}

func walkAll(b *testing.B, members []redfishsim.Member, workers int) (failed, requests int, why map[Status]string) {
	why = map[Status]string{}
	jobs := make(chan redfishsim.Member)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for m := range jobs {
				res, err := Walk(b.Context(), Endpoint{ID: m.BMC.Xname(), FQDN: m.Addr, User: "root",
					Password: "sim-pass", Scheme: "http"}, Options{Timeout: 5 * time.Minute})
				mu.Lock()
				requests += res.Requests
				if err != nil {
					failed++
					if len(res.Errors) > 0 {
						why[res.Status] = res.Errors[0]
					}
				}
				mu.Unlock()
			}
		})
	}
	for _, m := range members {
		jobs <- m
	}
	close(jobs)
	wg.Wait()
	return failed, requests, why
}
