package ipxe

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/hmsuite/hms/statemgr"
	"github.com/hmsuite/hms/statemgr/client"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// withHSM runs a real HSM and a BSS subscribed to it, both on loopback :0,
// until the test ends; more, if given, adds to BSS's configuration.
func withHSM(t *testing.T, more ...func(*DaemonConfig)) (*client.Client, *Daemon) {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	hsmd, err := statemgr.StartDaemon(ctx, statemgr.DaemonConfig{Listen: "127.0.0.1:0", DB: filepath.Join(dir, "hsm.db"),
		CredKeyFile: filepath.Join(dir, "cred.key")})
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 2)
	go func() { errc <- hsmd.Run(ctx) }()
	stop := func() {
		cancel()
		for range cap(errc) {
			if err := <-errc; err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("daemon: %v", err)
			}
		}
	}
	hc := client.New(hsmd.URL(), nil, "")
	// The first node exists before BSS starts, so the initial read finds it.
	err = hc.PostComponents(t.Context(), []hsm.Component{{ID: "x3000c0s1b0n0", Type: "Node", State: "On", Role: "Compute"}}, false)
	if err == nil {
		err = hc.CreateEthernetInterface(t.Context(), hsm.EthernetInterface{MACAddress: "aa:bb:cc:00:00:01",
			ComponentID: "x3000c0s1b0n0", IPAddresses: []hsm.IPAddressMapping{{IPAddress: "10.0.0.1"}}})
	}
	if err != nil {
		errc <- nil
		stop()
		t.Fatal(err)
	}
	cfg := DaemonConfig{Listen: "127.0.0.1:0", DB: filepath.Join(dir, "bss.db"), HSMURL: hsmd.URL(),
		AdvertiseURL: "http://bss", Resync: time.Hour}
	for _, m := range more {
		m(&cfg)
	}
	bss, err := StartDaemon(ctx, cfg)
	if err != nil {
		errc <- nil
		stop()
		t.Fatal(err)
	}
	go func() { errc <- bss.Run(ctx) }()
	t.Cleanup(stop)
	select {
	case <-bss.Service().Subscribed():
	case <-time.After(10 * time.Second):
		t.Fatal("BSS did not subscribe to HSM")
	}
	waitFor(t, bss.svc.cache, "the initial read of HSM", func() bool { _, ok := bss.svc.cache.ByMAC("aa:bb:cc:00:00:01"); return ok })
	return hc, bss
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 8192)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, b.String()
}

// TestCacheFollowsHSM: a role change, a state change and a new node's first
// change reach
// BSS through SCNs (the periodic resync is an hour away), and the next
// boot script follows.
func TestCacheFollowsHSM(t *testing.T) {
	hc, bss := withHSM(t)
	c := bss.svc.cache
	for _, body := range []string{`{"hosts":["Compute"],"kernel":"http://compute-k"}`, `{"hosts":["Application"],"kernel":"http://app-k"}`} {
		if _, err := bss.svc.Put(t.Context(), mustParams(t, body)); err != nil {
			t.Fatal(err)
		}
	}
	script := func() string {
		st, body := get(t, bss.URL()+"/boot/v1/bootscript?mac=aa:bb:cc:00:00:01")
		if st != 200 {
			t.Fatalf("bootscript: %d %s", st, body)
		}
		return body
	}
	if s := script(); !strings.Contains(s, "kernel --name kernel http://compute-k ") {
		t.Fatalf("before the role change:\n%s", s)
	}

	if err := hc.BulkRole(t.Context(), []string{"x3000c0s1b0n0"}, "Application", ""); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, "the role change", func() bool { n, _ := c.Node("x3000c0s1b0n0"); return n.Role == "Application" })
	if s := script(); !strings.Contains(s, "kernel --name kernel http://app-k ") {
		t.Errorf("after the role change:\n%s", s)
	}

	if err := hc.StateData(t.Context(), "x3000c0s1b0n0", "Off", "", false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, "the state change", func() bool { n, _ := c.Node("x3000c0s1b0n0"); return n.State == "Off" })

	if err := hc.PostComponents(t.Context(), []hsm.Component{{ID: "x3000c0s2b0n0", Type: "Node", State: "On", Role: "Compute"}}, false); err != nil {
		t.Fatal(err)
	}
	// HSM sends no SCN for a new component; its first state change names it,
	// and BSS reads the node it does not know.
	if err := hc.StateData(t.Context(), "x3000c0s2b0n0", "Off", "", false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, "the new node", func() bool { _, ok := c.Node("x3000c0s2b0n0"); return ok })
	if st, body := get(t, bss.URL()+"/boot/v1/hosts?name=x3000c0s2b0n0"); st != 200 || !strings.Contains(body, `"Role":"Compute"`) {
		t.Errorf("hosts: %d %s", st, body)
	}
}

// TestUnknownMACLookedUp: a MAC the cache misses is looked up in HSM in
// the background, so the node's chain back is answered as known.
func TestUnknownMACLookedUp(t *testing.T) {
	hc, bss := withHSM(t)
	if _, err := bss.svc.Put(t.Context(), mustParams(t, `{"hosts":["Default"],"kernel":"http://dk"}`)); err != nil {
		t.Fatal(err)
	}
	if err := hc.PostComponents(t.Context(), []hsm.Component{{ID: "x3000c0s3b0n0", Type: "Node", State: "On", Role: "Compute"}}, false); err != nil {
		t.Fatal(err)
	}
	// Interfaces have no SCN: only the lookup of the missed MAC finds this one.
	if err := hc.CreateEthernetInterface(t.Context(), hsm.EthernetInterface{MACAddress: "aa:bb:cc:00:00:03",
		ComponentID: "x3000c0s3b0n0"}); err != nil {
		t.Fatal(err)
	}
	if _, body := get(t, bss.URL()+"/boot/v1/bootscript?mac=aa:bb:cc:00:00:03"); !strings.Contains(body, "arch=${buildarch}") {
		t.Errorf("first answer is not the chain back of an unknown node:\n%s", body)
	}
	c := bss.svc.cache
	waitFor(t, c, "the looked-up MAC", func() bool { _, ok := c.ByMAC("aa:bb:cc:00:00:03"); return ok })
	if _, body := get(t, bss.URL()+"/boot/v1/bootscript?mac=aa:bb:cc:00:00:03"); !strings.Contains(body, "xname=x3000c0s3b0n0") {
		t.Errorf("chain back:\n%s", body)
	}
}

// TestKnownNodeNewMACLookedUp: a MAC the cache misses whose node the cache
// already knows (read before HSM gave the node that interface, as when
// HSM's walk writes a node before its interfaces) is looked up too, so the
// node does not get the unknown-node chain until the next resync.
func TestKnownNodeNewMACLookedUp(t *testing.T) {
	hc, bss := withHSM(t)
	if _, err := bss.svc.Put(t.Context(), mustParams(t, `{"hosts":["Default"],"kernel":"http://dk"}`)); err != nil {
		t.Fatal(err)
	}
	if err := hc.PostComponents(t.Context(), []hsm.Component{{ID: "x3000c0s4b0n0", Type: "Node", State: "On", Role: "Compute"}}, false); err != nil {
		t.Fatal(err)
	}
	if err := hc.StateData(t.Context(), "x3000c0s4b0n0", "Off", "", false); err != nil { // its SCN has bss read the node
		t.Fatal(err)
	}
	c := bss.svc.cache
	waitFor(t, c, "the node", func() bool { _, ok := c.Node("x3000c0s4b0n0"); return ok })
	if err := hc.CreateEthernetInterface(t.Context(), hsm.EthernetInterface{MACAddress: "aa:bb:cc:00:00:04",
		ComponentID: "x3000c0s4b0n0"}); err != nil {
		t.Fatal(err)
	}
	get(t, bss.URL()+"/boot/v1/bootscript?mac=aa:bb:cc:00:00:04")
	waitFor(t, c, "the looked-up MAC of a known node", func() bool { _, ok := c.ByMAC("aa:bb:cc:00:00:04"); return ok })
	if _, body := get(t, bss.URL()+"/boot/v1/bootscript?mac=aa:bb:cc:00:00:04"); !strings.Contains(body, "xname=x3000c0s4b0n0") {
		t.Errorf("chain back:\n%s", body)
	}
}

func mustParams(t *testing.T, body string) BootParams {
	t.Helper()
	var bp BootParams
	if err := jsonUnmarshal([]byte(body), &bp); err != nil {
		t.Fatal(err)
	}
	return bp
}

// TestMissedMACsLookedUpTogether: the MACs the cache missed meanwhile are
// read from HSM in one query (a boot storm misses a thousand a second), and
// each node found is put in the cache.
func TestMissedMACsLookedUpTogether(t *testing.T) {
	hc, _ := withHSM(t)
	var comps []hsm.Component
	for i := range 20 {
		comps = append(comps, hsm.Component{ID: fmt.Sprintf("x3001c0s%db0n0", i+1), Type: "Node", State: "On", Role: "Compute"})
	}
	if err := hc.PostComponents(t.Context(), comps, false); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(c *Config) { c.HSM = hc })
	for i, c := range comps {
		mac := fmt.Sprintf("aa:bb:cc:01:00:%02x", i)
		if err := hc.CreateEthernetInterface(t.Context(), hsm.EthernetInterface{MACAddress: mac, ComponentID: c.ID}); err != nil {
			t.Fatal(err)
		}
		h.svc.missed(mac)
		h.svc.missed(mac) // asked twice, read once
	}
	before := testutil.ToFloat64(h.svc.m.lookups)
	h.svc.lookupKeys(t.Context(), h.svc.drainLookups(<-h.svc.lookups))
	if n := testutil.ToFloat64(h.svc.m.lookups) - before; n != 2 { // the interfaces, then their nodes
		t.Errorf("%v HSM reads for 20 missed MACs, want 2", n)
	}
	for i, c := range comps {
		if n, ok := h.svc.cache.ByMAC(fmt.Sprintf("aa:bb:cc:01:00:%02x", i)); !ok || n.ID != c.ID {
			t.Errorf("MAC of %s: cache has %v, %v", c.ID, n, ok)
		}
	}
}

// TestPostHostsRereads: POST /boot/v1/hosts answers once BSS has read HSM
// again, so a node HSM got without an SCN (a new component) is known to the
// next request.
func TestPostHostsRereads(t *testing.T) {
	hc, bss := withHSM(t)
	if err := hc.PostComponents(t.Context(), []hsm.Component{{ID: "x3000c0s2b0n0", Type: "Node", State: "On", Role: "Compute"}}, false); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, bss.URL()+"/boot/v1/hosts", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("POST /hosts: %s, want 204", resp.Status)
	}
	if st, body := get(t, bss.URL()+"/boot/v1/hosts?name=x3000c0s2b0n0"); st != 200 || !strings.Contains(body, `"Role":"Compute"`) {
		t.Errorf("hosts after POST /hosts: %d %s", st, body)
	}
}
