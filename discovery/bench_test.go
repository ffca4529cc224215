package discovery

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/redfishsim"
	"github.com/hmsuite/hms/internal/snmpsim"
	"github.com/hmsuite/hms/ipxe/lease"
)

// benchXname names BMC i of the benchmark: 64 per cabinet, as River racks.
func benchXname(i int) string { return fmt.Sprintf("x%dc0s%db0", 3000+i/64, i%64+1) }

// benchLayout cables n BMCs evenly to len(addrs) switches x3000c0w14...
func benchLayout(addrs []string, n int) map[string]any {
	hw := map[string]any{}
	for i := range n {
		cab := fmt.Sprintf("x%d", 3000+i/64)
		hw[cab] = map[string]any{"Xname": cab, "Class": "River"}
	}
	per := (n + len(addrs) - 1) / len(addrs)
	for k, addr := range addrs {
		sw := fmt.Sprintf("x3000c0w%d", 14+k)
		hw[sw] = map[string]any{"Xname": sw, "Class": "River", "ExtraProperties": map[string]any{"IP4addr": addr}}
		for j := 0; j < per && k*per+j < n; j++ {
			i := k*per + j
			bmc := benchXname(i)
			conn := fmt.Sprintf("%sj%d", sw, j+1)
			hw[conn] = map[string]any{"Xname": conn, "Class": "River", "ExtraProperties": map[string]any{
				"VendorName": fmt.Sprintf("ethernet1/1/%d", j+1), "NodeNics": []string{bmc}}}
			hw[bmc] = map[string]any{"Xname": bmc, "Class": "River"}
			hw[bmc+"n0"] = map[string]any{"Xname": bmc + "n0", "Class": "River", "ExtraProperties": map[string]any{"NID": i + 1, "Role": "Compute"}}
		}
	}
	return hw
}

// BenchmarkLeaseToRegistered measures the time from a lease event for a
// new BMC to its RedfishEndpoint registered in HSM (SNMP walk, SLS lookup,
// password change and checks on the simulated BMC, HSM writes), for 1 and
// for 500 BMCs leased at once behind 4 switches, with HSM walking the
// registered BMCs meanwhile. Each iteration starts from factory BMCs.
// Besides p50/p99/max of the whole, it reports the p99 of each stage
// (Timing) and, as walked-p50/p99-s, the time from the lease to HSM's walk
// of the BMC done (read from HSM's DiscoveryInfo every second, so up to a
// second late: listing 500 endpoints more often costs HSM CPU the run
// itself needs).
func BenchmarkLeaseToRegistered(b *testing.B) {
	for _, c := range []struct {
		n    int
		held bool
	}{{n: 1}, {n: 500}, {n: 500, held: true}} {
		name := fmt.Sprintf("bmcs=%d", c.n)
		if c.held {
			// HSM's walks held until every BMC is registered: how much of
			// the time above is the walks' competition for the same CPU
			// and HSM's SQLite writer.
			name += "/hsm-walks=held"
		}
		b.Run(name, func(b *testing.B) { benchLeases(b, c.n, c.held) })
	}
}

func benchLeases(b *testing.B, n int, held bool) {
	var all, walked []time.Duration
	var stages []Timing
	for range b.N {
		b.StopTimer()
		var gate chan struct{} // nil: HSM's own transport, walks at once
		if held {
			gate = make(chan struct{})
		}
		s, macs := benchSuite(b, n, gate)
		b.StartTimer()
		t0 := time.Now()
		w := s.watchWalks(t0, n)
		took, ts := s.leaseAll(t0, macs)
		all, stages = append(all, took...), append(stages, ts...)
		b.StopTimer()
		if held {
			close(gate)
		}
		walked = append(walked, <-w...)
		s.close()
		b.StartTimer()
	}
	q := func(ds []time.Duration, p float64) float64 {
		ds = slices.Sorted(slices.Values(ds))
		return ds[min(len(ds)-1, int(p*float64(len(ds))))].Seconds()
	}
	b.ReportMetric(q(all, 0.50), "p50-s")
	b.ReportMetric(q(all, 0.99), "p99-s")
	b.ReportMetric(q(all, 1), "max-s")
	for _, st := range []struct {
		name string
		d    func(Timing) time.Duration
	}{
		{StageQueued, func(t Timing) time.Duration { return t.Queued }},
		{StageSwitch, func(t Timing) time.Duration { return t.Switch }},
		{StageSLS, func(t Timing) time.Duration { return t.SLS }},
		{StageCredentials, func(t Timing) time.Duration { return t.Credentials }},
		{StageHSM, func(t Timing) time.Duration { return t.HSM }},
	} {
		ds := make([]time.Duration, len(stages))
		for i, t := range stages {
			ds[i] = st.d(t)
		}
		b.ReportMetric(q(ds, 0.99), st.name+"-p99-s")
	}
	if len(walked) > 0 && !held {
		b.ReportMetric(q(walked, 0.50), "walked-p50-s")
		b.ReportMetric(q(walked, 0.99), "walked-p99-s")
	}
}

// watchWalks sends, once HSM has walked n endpoints, the time from t0 to
// each walk done, polling HSM's DiscoveryInfo.
func (s *suite) watchWalks(t0 time.Time, n int) <-chan []time.Duration {
	out := make(chan []time.Duration, 1)
	go func() {
		seen := map[string]time.Duration{}
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		deadline := time.After(2 * time.Minute)
		for len(seen) < n {
			select {
			case <-tick.C:
			case <-deadline:
				s.t.Errorf("HSM walked %d of %d endpoints in 2 minutes", len(seen), n)
				out <- nil
				return
			}
			eps, err := s.hsm.RedfishEndpoints(context.Background(), nil)
			if err != nil {
				s.t.Errorf("watch walks: %v", err)
				out <- nil
				return
			}
			at := time.Since(t0)
			for _, ep := range eps {
				if _, ok := seen[ep.ID]; !ok && ep.DiscoveryInfo.LastDiscoveryStatus == "DiscoverOK" {
					seen[ep.ID] = at
				}
			}
		}
		out <- slices.Collect(maps.Values(seen))
	}()
	return out
}

// benchSuite starts SLS, HSM (its walks held until walkGate is closed), n
// factory BMCs and 4 switches carrying them, and the service; it returns the
// BMCs' MACs.
func benchSuite(b *testing.B, n int, walkGate <-chan struct{}) (*suite, []string) {
	xnames, macs := make([]string, n), make([]string, n)
	for i := range n {
		xnames[i] = benchXname(i)
		macs[i] = redfishsim.MAC(xnames[i], "bmc:eth0")
	}
	const switches = 4
	per := (n + switches - 1) / switches
	var addrs []string
	for k := 0; k < switches; k++ {
		var sw snmpsim.Switch
		for j := 0; j < per && k*per+j < n; j++ {
			sw.Ports = append(sw.Ports, snmpsim.Port{Bridge: j + 1, IfIndex: 1000 + j + 1, Name: fmt.Sprintf("ethernet1/1/%d", j+1)})
			sw.FDB = append(sw.FDB, snmpsim.Entry{MAC: macs[k*per+j], Bridge: j + 1, VLAN: 1})
		}
		_, addr := startSim(b, sw)
		addrs = append(addrs, addr)
	}
	s := newSuiteOpts(b, benchLayout(addrs, n), xnames, suiteOpts{walkGate: walkGate})
	s.startService(NewSNMPWalker(SNMPConfig{}), Config{Switch: SwitchConfig{Community: "public"}})
	<-s.svc.Started()
	return s, macs
}

// leaseAll publishes a lease for every BMC at once (at t0) and returns each
// one's time to registration, and the stages of each.
func (s *suite) leaseAll(t0 time.Time, macs []string) ([]time.Duration, []Timing) {
	msgs := make([]bus.Message, len(macs))
	for i, mac := range macs {
		v, _ := lease.Encode(lease.Event{Kind: lease.Commit, MACAddress: mac, IPAddress: s.bmcIP(i), Time: time.Now()})
		msgs[i] = bus.Message{Key: []byte(lease.Key(mac)), Value: v}
	}
	if err := s.bus.Publish(context.Background(), lease.Topic, msgs...); err != nil {
		s.t.Fatal(err)
	}
	out := make([]time.Duration, 0, len(macs))
	stages := make([]Timing, 0, len(macs))
	for range macs {
		o := s.next()
		if o.err != nil {
			s.t.Fatalf("%s: %v", o.mac, o.err)
		}
		out = append(out, time.Since(t0))
		stages = append(stages, o.timing)
	}
	return out, stages
}
