package discovery

import (
	"context"
	"fmt"
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
func BenchmarkLeaseToRegistered(b *testing.B) {
	for _, n := range []int{1, 500} {
		b.Run(fmt.Sprintf("bmcs=%d", n), func(b *testing.B) {
			var all []time.Duration
			for range b.N {
				b.StopTimer()
				s, macs := benchSuite(b, n)
				b.StartTimer()
				all = append(all, s.leaseAll(macs)...)
				b.StopTimer()
				s.close()
				b.StartTimer()
			}
			slices.Sort(all)
			q := func(p float64) float64 { return all[min(len(all)-1, int(p*float64(len(all))))].Seconds() }
			b.ReportMetric(q(0.50), "p50-s")
			b.ReportMetric(q(0.99), "p99-s")
			b.ReportMetric(all[len(all)-1].Seconds(), "max-s")
		})
	}
}

// benchSuite starts SLS, HSM, n factory BMCs and 4 switches carrying them,
// and the service; it returns the BMCs' MACs.
func benchSuite(b *testing.B, n int) (*suite, []string) {
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
	s := newSuite(b, benchLayout(addrs, n), xnames)
	s.startService(NewSNMPWalker(SNMPConfig{}), Config{Switch: SwitchConfig{Community: "public"}})
	<-s.svc.Started()
	return s, macs
}

// leaseAll publishes a lease for every BMC at once and returns each one's
// time to registration.
func (s *suite) leaseAll(macs []string) []time.Duration {
	msgs := make([]bus.Message, len(macs))
	for i, mac := range macs {
		v, _ := lease.Encode(lease.Event{Kind: lease.Commit, MACAddress: mac, IPAddress: s.bmcIP(i), Time: time.Now()})
		msgs[i] = bus.Message{Key: []byte(lease.Key(mac)), Value: v}
	}
	t0 := time.Now()
	if err := s.bus.Publish(context.Background(), lease.Topic, msgs...); err != nil {
		s.t.Fatal(err)
	}
	out := make([]time.Duration, 0, len(macs))
	for range macs {
		o := s.next()
		if o.err != nil {
			s.t.Fatalf("%s: %v", o.mac, o.err)
		}
		out = append(out, time.Since(t0))
	}
	return out
}
