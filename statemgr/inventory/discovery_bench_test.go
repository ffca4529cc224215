package inventory

import (
	"context"
	"crypto/tls"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/statemgr/hsm"
	"github.com/hmsuite/hms/statemgr/internal/hsmtest"
)

// BenchmarkDiscoverFleet registers 1,000 simulated BMCs (generated model, one
// node each, each on its own loopback port) in one POST with
// RediscoverOnUpdate and measures until every endpoint is DiscoverOK: walks
// on the default 32-worker pool plus storing components, NICs and inventory.
// The BMCs speak plain HTTP (http) or HTTPS with a self-signed certificate
// (https, as real BMCs do); the simulator runs in the benchmark process, so
// cpu-s counts its CPU too. https-storm registers them as reds does in a
// boot storm, one POST per BMC from 8 clients at once, so the burst cap
// (DiscoveryConfig.BurstWalks) is in force while they arrive.
func BenchmarkDiscoverFleet(b *testing.B) {
	for _, bc := range []struct {
		name       string
		tls, storm bool
	}{{name: "http"}, {name: "https", tls: true}, {name: "https-storm", tls: true, storm: true}} {
		b.Run(bc.name, func(b *testing.B) { benchDiscoverFleet(b, bc.tls, bc.storm) })
	}
}

func benchDiscoverFleet(b *testing.B, useTLS, storm bool) {
	const bmcs = 1000
	var tc *tls.Config
	if useTLS {
		var err error
		if tc, err = redfishsim.NewTLSConfig(); err != nil {
			b.Fatal(err)
		}
	}
	fleet, err := redfishsim.NewFleet(redfishsim.FleetConfig{Count: bmcs, Listen: "127.0.0.1:0",
		Tree: redfishsim.Template(1), User: "root", Password: rfPassword, TLS: tc})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(b.Context())
	done := make(chan error, 1)
	go func() { done <- fleet.Run(ctx) }()
	defer func() { cancel(); <-done }()
	eps := make([]hsm.RedfishEndpoint, 0, bmcs)
	for _, m := range fleet.Members() {
		eps = append(eps, hsm.RedfishEndpoint{ID: m.BMC.Xname(), FQDN: m.Addr, User: "root", Password: rfPassword, RediscoverOnUpdate: true})
	}
	for b.Loop() {
		b.StopTimer()
		e := newRFEnvWith(b, DiscoveryConfig{PlainHTTP: !useTLS, Timeout: 5 * time.Minute}, false)
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		b.StartTimer()
		start, cpu := time.Now(), hsmtest.CPUTime()
		register(b, e, eps, storm)
		waitDiscovered(b, e, bmcs)
		elapsed, cpu := time.Since(start), hsmtest.CPUTime()-cpu
		b.StopTimer()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		nodes := len(e.List("?type=Node"))
		if nodes != bmcs {
			b.Fatalf("%d nodes stored, want %d", nodes, bmcs)
		}
		b.ReportMetric(elapsed.Seconds(), "s/1000bmcs")
		b.ReportMetric(cpu.Seconds(), "cpu-s/1000bmcs")
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/bmcs/1024, "KiB-alloc/bmc")
		b.ReportMetric(float64(after.Sys)/(1<<20), "MiB-sys")
		b.ReportMetric(float64(after.HeapInuse)/(1<<20), "MiB-heap-inuse")
		b.StartTimer()
	}
}

// register POSTs eps to e: in one request, or (storm) one request per
// endpoint from 8 clients at once.
func register(b *testing.B, e *rfEnv, eps []hsm.RedfishEndpoint, storm bool) {
	if !storm {
		e.Must(201, "POST", "/Inventory/RedfishEndpoints", hsm.RedfishEndpointList{RedfishEndpoints: eps})
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(eps); i = int(next.Add(1)) - 1 {
				if got, out := e.Do("POST", "/Inventory/RedfishEndpoints", hsm.RedfishEndpointList{RedfishEndpoints: eps[i : i+1]}); got != 201 {
					b.Errorf("POST %s: %d %s", eps[i].ID, got, out)
					return
				}
			}
		})
	}
	wg.Wait()
}

// waitDiscovered polls e's endpoints every 50 ms until n are DiscoverOK;
// any other final status fails b.
func waitDiscovered(b *testing.B, e *rfEnv, n int) {
	b.Helper()
	for {
		var ok, failed int
		err := e.store.db.R.QueryRowContext(b.Context(), `SELECT
			COALESCE(SUM(CASE WHEN last_status = 'DiscoverOK' THEN 1 ELSE 0 END), 0),
			COALESCE(SUM(CASE WHEN last_status NOT IN ('DiscoverOK', 'NotYetQueried', 'DiscoveryStarted') THEN 1 ELSE 0 END), 0)
			FROM rf_endpoints`).Scan(&ok, &failed)
		if err != nil {
			b.Fatal(err)
		}
		if failed > 0 {
			b.Fatalf("%d walks failed", failed)
		}
		if ok == n {
			return
		}
		<-time.After(50 * time.Millisecond)
	}
}
