package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/auth/token"
	"github.com/hmsuite/hms/ipxe/bss"
	"github.com/hmsuite/hms/sim"
	"github.com/hmsuite/hms/statemgr/client"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// The HMS node-management workflows end to end, against the real daemons
// (sls, hsm, hbtd, hmnfd, bss with its DHCP server, reds) and the simulated
// hardware of package sim: BMCs with factory credentials leased through a
// DHCP relay and cabled on an SNMP switch, nodes that boot from bss and
// heartbeat. Each workflow's observable steps are checked to happen in
// order, for every node.
//
// Add nodes: the admin writes the nodes, BMCs and switch ports to SLS (hms
// node add); the hardware goes in, powered on. Its BMC gets a lease, reds
// finds it on the switch port and SLS (located), sets its credentials and
// registers it in HSM, HSM walks it and takes NID and role from SLS, the
// node gets a boot script naming it, heartbeats, goes Ready, and an hmnfd
// subscriber gets the Ready SCN.
//
// Remove nodes: the admin deletes them from SLS (hms node remove), powers
// them off; heartbeats stop (Standby, and its SCN); the hardware comes out;
// reds sees the BMC gone and not in SLS, and HSM marks BMC and node Empty
// (and the subscriber gets the Empty SCN).

// TestAddAndRemoveNodes runs the workflows against the daemons in this
// process, as hms up runs them.
func TestAddAndRemoveNodes(t *testing.T) {
	runWorkflows(t, newSuite(t, ""), false)
}

// TestAddAndRemoveNodesEnforced runs the same workflows with every daemon
// checking tokens: the daemons call each other with an admin token, the
// admin's CLI and the sim's own calls send one, and the simulated nodes
// heartbeat with the node tokens bss puts on their kernel command line.
func TestAddAndRemoveNodesEnforced(t *testing.T) {
	s := newSuiteWith(t, "", true)
	checkRefusesAnonymous(t, s)
	runWorkflows(t, s, false)
}

// TestAddAndRemoveNodesEnforcedBinaries runs the enforced workflows against
// the daemons as separate processes built from cmd/*: each gets the site's
// key file, bss's node-token keys and its service token (-token-file) by
// its flags alone, as a deployment of separate binaries does.
func TestAddAndRemoveNodesEnforcedBinaries(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the daemons' binaries")
	}
	s := newSuiteWith(t, buildBinaries(t), true)
	checkRefusesAnonymous(t, s)
	runWorkflows(t, s, false)
}

// checkRefusesAnonymous fails the test unless every daemon of s answers a
// request without a token with 401.
func checkRefusesAnonymous(t *testing.T, s *suite) {
	t.Helper()
	for _, d := range s.daemons {
		var v any
		if err := getJSON(t.Context(), http.DefaultClient, s.url(d)+"/nosuchroute", &v); err == nil || !strings.Contains(err.Error(), "status 401") {
			t.Fatalf("%s without a token: %v, want 401", d, err)
		}
	}
}

// TestAddAndRemoveNodesKilled runs the same workflows against the daemons
// as separate processes built from cmd/*, and kills hsm, hmnfd and reds
// with SIGKILL mid-workflow (reds once a BMC has its lease, hsm once one is
// registered, hmnfd once a node has booted) and restarts them: the workflow
// completes and the subscriber misses no SCN.
func TestAddAndRemoveNodesKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the daemons' binaries")
	}
	runWorkflows(t, newSuite(t, buildBinaries(t)), true)
}

// The machine: two nodes at start, four added, two of those removed and
// one of them put back.
var (
	startNodes = []string{"x3000c0s1b0n0", "x3000c0s1b1n0"}
	newNodes   = []string{"x3000c0s5b0n0", "x3000c0s5b1n0", "x3000c0s6b0n0", "x3000c0s6b1n0"}
	goneNodes  = newNodes[:2]
)

func runWorkflows(t *testing.T, s *suite, kill bool) {
	waitSubscribed(t, s)
	sm := startSim(t, s)
	h := client.New(s.url("hsm"), s.client(), "workflow-test")
	if err := waitFor(t.Context(), 2*time.Minute, func() (bool, error) {
		cs, err := h.QueryComponents(t.Context(), startNodes)
		return err == nil && len(cs) == 2 && cs[0].State == "Ready" && cs[1].State == "Ready", nil
	}); err != nil {
		t.Fatalf("the starting machine: %v", err)
	}
	sub := newSubscriber(t)
	sub.subscribe(t, s.client(), s.url("hmnfd"), append(slices.Clone(startNodes), newNodes...))

	// Add nodes: the admin's step, then the hardware.
	nids := map[string]int{}
	for i, n := range newNodes {
		nids[n] = 101 + i
		port := 9 + i // the sim cables slot s, BMC b on port (s-1)*2+b+1
		admin(t, s, "node", "add", n, "-nid", strconv.Itoa(nids[n]), "-role", "Compute",
			"-switch-port", fmt.Sprintf("x3000c0w1j%d", port), "-vendor-port", fmt.Sprintf("ethernet1/1/%d", port))
	}
	if err := sm.Add(t.Context(), sim.Request{XNames: bmcs(newNodes)}); err != nil {
		t.Fatal(err)
	}
	w := newWatcher(s, sm, sub, newNodes, addSteps(nids))
	if kill {
		for step, d := range map[string]string{"bmc leased": "reds", "bmc registered": "hsm", "node booted (script names it)": "hmnfd"} {
			w.hooks[step] = func() { t.Logf("kill -9 %s at the first %q; restart", d, step); s.restart(d) }
		}
	}
	w.run(t, 3*time.Minute, len(w.steps))
	if len(w.hooks) > 0 {
		t.Errorf("daemons not killed mid-workflow: %v", slices.Collect(maps.Keys(w.hooks)))
	}
	for _, n := range newNodes {
		if e, err := h.RedfishEndpoint(t.Context(), bmcOf(n)); err != nil || e.DiscoveryInfo.LastDiscoveryStatus != "DiscoverOK" {
			t.Errorf("%s: HSM endpoint %+v (%v), want walked DiscoverOK", bmcOf(n), e.DiscoveryInfo, err)
		}
	}

	// hms get leases shows each new BMC's lease, bound.
	var leases []bss.DHCPLease
	if err := json.Unmarshal([]byte(admin(t, s, "get", "leases", "-state", "bound", "-o", "json")), &leases); err != nil {
		t.Fatal(err)
	}
	for _, n := range newNodes {
		d := w.all(t.Context()).devices[n]
		if !slices.ContainsFunc(leases, func(l bss.DHCPLease) bool { return l.MACAddress == d.BMCMAC }) {
			t.Errorf("hms get leases: no bound lease of %s's BMC MAC %s in %+v", n, d.BMCMAC, leases)
		}
	}

	// reds' own record converges too (a registration whose answer a killed
	// hsm never sent is retried after a backoff).
	w.waitReds(t, "registered")

	// Remove nodes: SLS first, power off, then the hardware comes out.
	for _, n := range goneNodes {
		admin(t, s, "node", "remove", n)
	}
	if err := sm.Power(bmcs(goneNodes), false); err != nil {
		t.Fatal(err)
	}
	w = newWatcher(s, sm, sub, goneNodes, removeSteps)
	w.run(t, 2*time.Minute, 4) // off, silent, Standby and its SCN
	if err := sm.Remove(t.Context(), sim.Request{XNames: bmcs(goneNodes)}); err != nil {
		t.Fatal(err)
	}
	w.run(t, 2*time.Minute, len(w.steps))
	w.waitReds(t, "removed")

	// A removed node put back (same xname and NID) is a new device: it is
	// found, registered and walked again, and goes Ready. HSM still maps
	// its MACs to its xname, so bss names it in its boot script at once
	// and it may heartbeat while HSM still has it Empty; HSM refuses those
	// (Empty -> Ready is not a transition, as in HMS), and hbtd reports
	// only changes, so it is HSM's heartbeat check that sets it Ready once
	// the walk has found it On (as HMS does after a walk).
	back := goneNodes[0]
	admin(t, s, "node", "add", back, "-nid", strconv.Itoa(nids[back]), "-role", "Compute", "-switch-port", "x3000c0w1j9", "-vendor-port", "ethernet1/1/9")
	if err := sm.Add(t.Context(), sim.Request{XNames: bmcs([]string{back})}); err != nil {
		t.Fatal(err)
	}
	var c hsm.Component
	if err := waitFor(t.Context(), 2*time.Minute, func() (bool, error) {
		c, _ = h.Component(t.Context(), back)
		e, _ := h.RedfishEndpoint(t.Context(), bmcOf(back))
		return c.State != "" && c.State != "Empty" && e.Enabled != nil && *e.Enabled, nil
	}); err != nil {
		t.Fatalf("%s put back: HSM %+v; want its endpoint enabled and the node walked again (not Empty): %v", back, c, err)
	}
	if err := waitFor(t.Context(), 2*time.Minute, func() (bool, error) {
		c, _ = h.Component(t.Context(), back)
		return c.State == "Ready", nil
	}); err != nil {
		t.Fatalf("%s put back and heartbeating: HSM %+v, want Ready: %v", back, c, err)
	}
	if n := len(sm.Devices()); n != len(startNodes)+len(newNodes)-1 {
		t.Errorf("sim has %d devices after one of two removed was put back, want %d", n, len(startNodes)+len(newNodes)-1)
	}

	// The rest of the machine is untouched, and no SCN was lost or reordered.
	cs, err := h.QueryComponents(t.Context(), append(slices.Clone(startNodes), newNodes[2:]...))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if c.State != "Ready" {
			t.Errorf("%s is %s after the workflows, want Ready", c.ID, c.State)
		}
	}
	got := sub.states()
	for _, n := range goneNodes {
		if !inOrder(got[n], "Ready", "Standby", "Empty") {
			t.Errorf("%s: subscriber got %v, want Ready, Standby, Empty in that order", n, got[n])
		}
	}
	if err := waitFor(t.Context(), time.Minute, func() (bool, error) {
		return inOrder(sub.states()[back], "Ready", "Standby", "Empty", "Ready"), nil
	}); err != nil {
		t.Errorf("%s: subscriber got %v, want Ready again after Empty: %v", back, sub.states()[back], err)
	}
	for _, n := range newNodes[2:] {
		if !slices.Contains(got[n], "Ready") {
			t.Errorf("%s: subscriber got %v, want Ready", n, got[n])
		}
	}
}

// inOrder reports whether want appear in got in that order (repeats, an
// at-least-once delivery, allowed).
func inOrder(got []string, want ...string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}

func bmcs(nodes []string) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, bmcOf(n))
	}
	return out
}

// admin runs an hms CLI command against the suite and returns its output.
func admin(t *testing.T, s *suite, args ...string) string {
	t.Helper()
	out, stderr, err := hmsRun(t, s, args...)
	if err != nil {
		t.Fatalf("hms %v: %v\n%s%s", args, err, out, stderr)
	}
	return out
}

// startSim runs the simulated machine against s with startNodes.
func startSim(t *testing.T, s *suite) *sim.Sim {
	t.Helper()
	sm, err := sim.New(sim.Config{Nodes: len(startNodes), SLSURL: s.url("sls"), BSSURL: s.url("bss"), HBTDURL: s.url("hbtd"),
		DHCPServer: fmt.Sprintf("127.0.0.1:%d", s.dhcp), Relay: fmt.Sprintf("127.20.0.1:%d", s.relay),
		BMCPort: s.bmc, SNMPPort: s.snmp, Control: "127.0.0.1:0", Kernel: "http://127.0.0.1/sim/vmlinuz",
		BootRetry: 200 * time.Millisecond, HeartbeatInterval: time.Second, Token: token.Config{Token: s.admin}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sm.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("sim: %v", err)
		}
	})
	return sm
}

// waitSubscribed waits until hmnfd and bss have their SCN subscriptions in
// HSM (SCNs before that are not for them).
func waitSubscribed(t *testing.T, s *suite) {
	t.Helper()
	h := client.New(s.url("hsm"), s.client(), "workflow-test")
	if err := waitFor(t.Context(), time.Minute, func() (bool, error) {
		subs, err := h.Subscriptions(t.Context())
		n := 0
		for _, sub := range subs {
			if strings.HasPrefix(sub.Url, s.url("hmnfd")) || strings.HasPrefix(sub.Url, s.url("bss")) {
				n++
			}
		}
		return err == nil && n == 2, nil
	}); err != nil {
		t.Fatalf("hmnfd and bss subscribed to HSM: %v", err)
	}
}

// waitReds waits until reds records each of w's BMCs in state.
func (w *watcher) waitReds(t *testing.T, state string) {
	t.Helper()
	var s snapshot
	if err := waitFor(t.Context(), time.Minute, func() (bool, error) {
		w.read(t.Context(), "reds", &s)
		for _, n := range w.nodes {
			if s.reds[bmcOf(n)] != state {
				return false, nil
			}
		}
		return true, nil
	}); err != nil {
		t.Fatalf("reds never recorded every BMC %s (%v): %v", state, s.reds, err)
	}
}
