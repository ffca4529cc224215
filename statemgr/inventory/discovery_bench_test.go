package inventory

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// BenchmarkDiscoverFleet registers 1,000 simulated BMCs (generated model, one
// node each, each on its own loopback port, plain HTTP) in one POST with
// RediscoverOnUpdate and measures until every endpoint is DiscoverOK: walks
// on the default 32-worker pool plus storing components, NICs and inventory.
func BenchmarkDiscoverFleet(b *testing.B) {
	const bmcs = 1000
	fleet, err := redfishsim.NewFleet(redfishsim.FleetConfig{Count: bmcs, Listen: "127.0.0.1:0",
		Tree: redfishsim.Template(1), User: "root", Password: rfPassword})
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
		e := newRFEnvWith(b, DiscoveryConfig{PlainHTTP: true, Timeout: 5 * time.Minute}, false)
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		b.StartTimer()
		start := time.Now()
		e.Must(201, "POST", "/Inventory/RedfishEndpoints", hsm.RedfishEndpointList{RedfishEndpoints: eps})
		for {
			var ok, failed int
			err := e.store.db.R.QueryRowContext(ctx, `SELECT
				COALESCE(SUM(CASE WHEN last_status = 'DiscoverOK' THEN 1 ELSE 0 END), 0),
				COALESCE(SUM(CASE WHEN last_status NOT IN ('DiscoverOK', 'NotYetQueried', 'DiscoveryStarted') THEN 1 ELSE 0 END), 0)
				FROM rf_endpoints`).Scan(&ok, &failed)
			if err != nil {
				b.Fatal(err)
			}
			if failed > 0 {
				b.Fatalf("%d walks failed", failed)
			}
			if ok == bmcs {
				break
			}
			<-time.After(50 * time.Millisecond)
		}
		elapsed := time.Since(start)
		b.StopTimer()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		nodes := len(e.List("?type=Node"))
		if nodes != bmcs {
			b.Fatalf("%d nodes stored, want %d", nodes, bmcs)
		}
		b.ReportMetric(elapsed.Seconds(), "s/1000bmcs")
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/bmcs/1024, "KiB-alloc/bmc")
		b.ReportMetric(float64(after.Sys)/(1<<20), "MiB-sys")
		b.ReportMetric(float64(after.HeapInuse)/(1<<20), "MiB-heap-inuse")
		b.StartTimer()
	}
}
