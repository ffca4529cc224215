package redfishsim

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFleetAddrs(t *testing.T) {
	tests := []struct {
		name, listen string
		n            int
		byAddr       bool
		want         []string
		wantErr      string
	}{
		{name: "ephemeral ports", listen: "127.0.0.1:0", n: 2, want: []string{"127.0.0.1:0", "127.0.0.1:0"}},
		{name: "consecutive ports", listen: "127.0.0.1:9000", n: 3, want: []string{"127.0.0.1:9000", "127.0.0.1:9001", "127.0.0.1:9002"}},
		{name: "consecutive addresses", listen: "127.0.0.254:443", n: 3, byAddr: true, want: []string{"127.0.0.254:443", "127.0.0.255:443", "127.0.1.0:443"}},
		{name: "out of ports", listen: "127.0.0.1:65535", n: 2, wantErr: "runs out of ports"},
		{name: "out of addresses", listen: "255.255.255.255:1", n: 2, byAddr: true, wantErr: "runs out of IPv4"},
		{name: "not an IP", listen: "localhost:1", n: 1, wantErr: "want IP:PORT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := fleetAddrs(tt.listen, tt.n, tt.byAddr)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("addresses (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFleetByAddress serves three BMCs on one port of three loopback
// addresses, each with its own xname-derived MACs.
func TestFleetByAddress(t *testing.T) {
	probe, err := net.Listen("tcp", "127.77.0.1:0")
	if err != nil {
		t.Skipf("cannot bind 127.77.0.1 (not Linux loopback /8?): %v", err)
	}
	port := probe.Addr().(*net.TCPAddr).Port
	probe.Close()
	f := runFleet(t, FleetConfig{Count: 3, Listen: fmt.Sprintf("127.77.0.1:%d", port), ByAddress: true, Tree: Template(1), User: testUser, Password: testPass})
	for i, m := range f.Members() {
		if want := fmt.Sprintf("http://127.77.0.%d:%d", i+1, port); m.URL != want {
			t.Errorf("member %d URL = %s, want %s", i, m.URL, want)
		}
		r, _ := http.NewRequestWithContext(t.Context(), "GET", m.URL+"/redfish/v1/Managers/BMC/EthernetInterfaces/eth0", nil)
		r.SetBasicAuth(testUser, testPass)
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		var nic struct{ MACAddress string }
		err = json.NewDecoder(resp.Body).Decode(&nic)
		resp.Body.Close()
		if got, want := nic.MACAddress, MAC(DefaultXname(i), "bmc:eth0"); err != nil || got != want {
			t.Errorf("member %d BMC MAC = %v (%v), want %s", i, got, err, want)
		}
	}
}

// BenchmarkFleet1000 starts 1,000 HTTPS BMCs sharing one generated template
// and one TLS config, sends each one authenticated GET and keeps the 1,000
// connections open, and reports what the fleet costs in heap plus goroutine
// stacks: once bound (before Run) and once serving with connections open.
func BenchmarkFleet1000(b *testing.B) {
	const n = 1000
	tlsConf, err := NewTLSConfig()
	if err != nil {
		b.Fatal(err)
	}
	tpl := Template(1)
	first := true
	for b.Loop() {
		base := memInUse()
		goroutines := runtime.NumGoroutine()
		f, err := NewFleet(FleetConfig{Count: n, Listen: "127.0.0.1:0", Tree: tpl, TLS: tlsConf, User: testUser, Password: testPass})
		if err != nil {
			b.Fatal(err)
		}
		bound := memInUse() - base
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- f.Run(ctx) }()
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, MaxIdleConnsPerHost: 1}}
		for _, m := range f.Members() {
			r, _ := http.NewRequest("GET", m.URL+"/redfish/v1/Systems/Node0", nil)
			r.SetBasicAuth(testUser, testPass)
			resp, err := client.Do(r)
			if err != nil || resp.StatusCode != 200 {
				b.Fatalf("%s: %v %v", m.URL, err, resp)
			}
			_, _ = io.Copy(io.Discard, resp.Body) // read to EOF so the connection stays open
			resp.Body.Close()
		}
		serving := memInUse() - base
		if first { // later rounds start while the previous fleet's connections wind down
			b.ReportMetric(float64(bound)/(1<<20), "bound-MiB")
			b.ReportMetric(float64(serving)/(1<<20), "serving-MiB")
			b.ReportMetric(float64(runtime.NumGoroutine()-goroutines), "goroutines")
			first = false
		}
		client.CloseIdleConnections()
		cancel()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
}

// memInUse is heap plus goroutine stacks in use after a collection. The
// client side of the benchmark's connections is included.
func memInUse() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse + ms.StackInuse)
}

// BenchmarkGet measures one authenticated GET of a templated system through
// the handler (no network).
func BenchmarkGet(b *testing.B) {
	bmc, err := New(Config{Xname: "x3000c0s1b0", Tree: Template(1), User: testUser, Password: testPass})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if w := serve(bmc, "GET", "/redfish/v1/Systems/Node0", nil); w.Code != 200 {
			b.Fatal(w.Code)
		}
	}
}
