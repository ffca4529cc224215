package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// freeUDP and freeTCP return a port free on 127.0.0.1 now (the daemons
// and the sim take fixed ports from each other's flags, as documented).
func freeUDP(t *testing.T) int {
	t.Helper()
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

func freeTCP(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// simUp runs hms up with a loopback DHCP server for the sim's relay and a
// fast reds and hbtd, then `hms sim` with the shape flags given against
// it; it returns the suite's URLs and the sim's control address.
func simUp(t *testing.T, shape ...string) (map[string]string, string) {
	t.Helper()
	dir := t.TempDir()
	conf := filepath.Join(dir, "sim-dhcp.json")
	if err := os.WriteFile(conf, []byte(`{"subnets":[{"subnet":"127.20.0.0/16","range":"127.20.1.0-127.20.255.254","relayed":true}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	dhcp, relay, bmc, snmp := freeUDP(t), freeUDP(t), freeTCP(t), freeUDP(t)
	u := suiteUpWith(t, filepath.Join(dir, "data"), func(string) string { return "" },
		"-bss-dhcp-listen", fmt.Sprintf("127.0.0.1:%d", dhcp), "-bss-dhcp-relay-port", strconv.Itoa(relay), "-bss-dhcp-config", conf,
		"-reds-bmc-port", strconv.Itoa(bmc), "-reds-bmc-insecure", "-reds-sls-refresh", "1s", "-reds-presence-interval", "1s",
		"-hbtd-warntime", "2", "-hbtd-errtime", "3")
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	ctx := t.Context()
	go func() {
		args := append([]string{"sim", "-sls-url", u["sls"], "-bss-url", u["bss"], "-hbtd-url", u["hbtd"],
			"-dhcp-server", fmt.Sprintf("127.0.0.1:%d", dhcp), "-relay", fmt.Sprintf("127.20.0.1:%d", relay),
			"-bmc-port", strconv.Itoa(bmc), "-snmp-port", strconv.Itoa(snmp), "-control", "127.0.0.1:0",
			"-heartbeat-interval", "1s", "-boot-retry", "200ms", "-log-level", "error"}, shape...)
		done <- run(ctx, args, func(string) string { return "" }, pw)
		pw.Close()
	}()
	t.Cleanup(func() {
		if err := <-done; err != nil {
			t.Errorf("hms sim: %v", err)
		}
	})
	sc := bufio.NewScanner(pr)
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), "sim ") {
		t.Fatalf("hms sim printed %q", sc.Text())
	}
	control := strings.TrimPrefix(strings.Fields(sc.Text())[1], "http://")
	go io.Copy(io.Discard, pr)
	return u, control
}

// nodeStates reads HSM's components of type typ: xname -> State.
func nodeStates(t *testing.T, hsmURL, typ string) map[string]string {
	t.Helper()
	var cs struct{ Components []struct{ ID, State string } }
	json.Unmarshal(call(t, "GET", hsmURL+"/hsm/v2/State/Components?type="+typ, "", http.StatusOK), &cs)
	out := map[string]string{}
	for _, c := range cs.Components {
		out[c.ID] = c.State
	}
	return out
}

// waitHSM polls HSM until ok holds of its nodes (typ). The suite runs on
// real clocks (DHCP, discovery walks, heartbeats), so this is a guard
// against a hang, not a timing assertion.
func waitHSM(t *testing.T, hsmURL, typ, what string, ok func(map[string]string) bool) {
	t.Helper()
	guard := time.After(3 * time.Minute)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		st := nodeStates(t, hsmURL, typ)
		if ok(st) {
			return
		}
		select {
		case <-tick.C:
		case <-guard:
			t.Fatalf("HSM never showed %s: %v", what, st)
		}
	}
}

func simCtl(t *testing.T, control string, args ...string) {
	t.Helper()
	args = append(append([]string{"sim"}, args...), "-control", control)
	if err := run(t.Context(), args, func(string) string { return "" }, io.Discard); err != nil {
		t.Fatalf("hms %v: %v", args, err)
	}
}

// TestSimNodesGoReadyAndAway: `hms sim -nodes 8` against `hms up` (DHCP on
// a loopback port, no root): every BMC gets a lease through the sim's relay,
// reds finds it on the simulated switch's port through SLS and registers it,
// HSM walks it, every node gets its address and a boot script naming it and
// heartbeats: 8 nodes Ready. Then a node powered off through its BMC goes
// Standby, and hardware removed by the sim and deleted from SLS goes Empty.
func TestSimNodesGoReadyAndAway(t *testing.T) {
	u, control := simUp(t, "-nodes", "8")
	waitHSM(t, u["hsm"], "Node", "8 Ready nodes", func(st map[string]string) bool {
		ready := 0
		for _, s := range st {
			if s == "Ready" {
				ready++
			}
		}
		return ready == 8
	})
	// The add-node workflow's side effects: discovery registered each BMC.
	var eps struct {
		Endpoints []struct{ Xname, State string }
	}
	json.Unmarshal(call(t, "GET", u["reds"]+"/v1/endpoints?state=registered", "", http.StatusOK), &eps)
	if len(eps.Endpoints) != 8 {
		t.Errorf("reds registered %d BMCs, want 8: %+v", len(eps.Endpoints), eps)
	}

	// hms describe node shows the node's last DHCP exchange, through the
	// sim's relay, beside its boot script fetch.
	var out strings.Builder
	err := run(t.Context(), []string{"describe", "node", "x3000c0s2b0n0", "-o", "json", "-sls-url", u["sls"], "-hsm-url", u["hsm"],
		"-hbtd-url", u["hbtd"], "-bss-url", u["bss"]}, func(string) string { return "" }, &out)
	var v struct {
		DHCPLease *struct {
			MACAddress, IPAddress, State, Relay string
			LastExchange                        time.Time
		}
		BootFetches []struct{ Endpoint string }
	}
	if err != nil || json.Unmarshal([]byte(out.String()), &v) != nil || v.DHCPLease == nil || v.DHCPLease.Relay != "127.20.0.1" ||
		v.DHCPLease.State != "bound" || v.DHCPLease.LastExchange.IsZero() || len(v.BootFetches) == 0 {
		t.Errorf("hms describe node: %v, lease %+v, fetches %v\n%s", err, v.DHCPLease, v.BootFetches, out.String())
	}

	simCtl(t, control, "power", "off", "x3000c0s1b0n0")
	simCtl(t, control, "remove", "x3000c0s1b1")
	call(t, "DELETE", u["sls"]+"/v1/hardware/x3000c0s1b1n0", "", http.StatusOK)
	call(t, "DELETE", u["sls"]+"/v1/hardware/x3000c0s1b1", "", http.StatusOK)
	waitHSM(t, u["hsm"], "Node", "the powered-off node Standby and the removed one Empty", func(st map[string]string) bool {
		return st["x3000c0s1b0n0"] == "Standby" && st["x3000c0s1b1n0"] == "Empty" && st["x3000c0s2b0n0"] == "Ready"
	})
	if st := nodeStates(t, u["hsm"], "NodeBMC"); st["x3000c0s1b1"] != "Empty" {
		t.Errorf("removed BMC is %q in HSM, want Empty", st["x3000c0s1b1"])
	}

	// Power back on: it boots again and heartbeats.
	simCtl(t, control, "power", "on", "x3000c0s1b0n0")
	waitHSM(t, u["hsm"], "Node", "the node powered on again Ready", func(st map[string]string) bool {
		return st["x3000c0s1b0n0"] == "Ready"
	})
}

// TestSimSuiteFlag: -suite takes a host, per-daemon URLs, or both.
func TestSimSuiteFlag(t *testing.T) {
	for _, tc := range []struct {
		v    string
		host string
		urls map[string]string
		bad  bool
	}{
		{v: "127.0.0.1", host: "127.0.0.1", urls: map[string]string{}},
		{v: "mgmt1", host: "mgmt1", urls: map[string]string{}},
		{v: "sls=http://a:8376,bss=https://b:27778/,hbtd=http://c:28500", host: "127.0.0.1",
			urls: map[string]string{"sls": "http://a:8376", "bss": "https://b:27778", "hbtd": "http://c:28500"}},
		{v: "mgmt1,hbtd=http://c:1", host: "mgmt1", urls: map[string]string{"hbtd": "http://c:1"}},
		{v: "hsm=http://a:1", bad: true},
		{v: "sls=a:8376", bad: true},
		{v: "a,b", bad: true},
		{v: "http://a:1", bad: true},
	} {
		host, urls, err := parseSuite(tc.v)
		if tc.bad {
			if err == nil {
				t.Errorf("-suite %q: no error", tc.v)
			}
			continue
		}
		if err != nil || host != tc.host || fmt.Sprint(urls) != fmt.Sprint(tc.urls) {
			t.Errorf("-suite %q: %q %v %v, want %q %v", tc.v, host, urls, err, tc.host, tc.urls)
		}
	}
}

// TestSimMountain: `hms sim -mountain 1` with one chassis of two blades:
// its chassis controller and four node cards get leases at the MACs MEDS
// derives from the SLS chassis, reds (its Mountain role) sets their
// credentials and registers them, HSM walks them, and the four nodes boot
// and heartbeat: Ready. No River hardware is simulated with -mountain alone.
func TestSimMountain(t *testing.T) {
	u, control := simUp(t, "-mountain", "1", "-mountain-chassis", "1", "-mountain-slots", "2")
	nodes := []string{"x1000c0s0b0n0", "x1000c0s0b1n0", "x1000c0s1b0n0", "x1000c0s1b1n0"}
	waitHSM(t, u["hsm"], "Node", "4 Ready Mountain nodes", func(st map[string]string) bool {
		for _, n := range nodes {
			if st[n] != "Ready" {
				return false
			}
		}
		return len(st) == len(nodes)
	})
	var eps struct {
		Endpoints []struct{ Xname, Kind, State string }
	}
	json.Unmarshal(call(t, "GET", u["reds"]+"/v1/endpoints?state=registered", "", http.StatusOK), &eps)
	kinds := map[string]string{}
	for _, e := range eps.Endpoints {
		kinds[e.Xname] = e.Kind
	}
	for _, x := range []string{"x1000c0b0", "x1000c0s0b0", "x1000c0s0b1", "x1000c0s1b0", "x1000c0s1b1"} {
		if kinds[x] != "mountain" {
			t.Errorf("reds: %s registered as %q, want mountain (all: %v)", x, kinds[x], kinds)
		}
	}
	waitHSM(t, u["hsm"], "ChassisBMC", "the chassis controller walked", func(st map[string]string) bool {
		return st["x1000c0b0"] == "Ready"
	})
	// HSM's walk of a node card names the one interface reds registered it
	// by: the BMC reports the MAC MEDS expects on its Manager's NIC.
	var eis []struct{ MACAddress string }
	json.Unmarshal(call(t, "GET", u["hsm"]+"/hsm/v2/Inventory/EthernetInterfaces?ComponentID=x1000c0s0b0", "", http.StatusOK), &eis)
	if len(eis) != 1 || eis[0].MACAddress != "02:03:e8:00:30:00" {
		t.Errorf("HSM's interfaces of x1000c0s0b0: %+v, want 02:03:e8:00:30:00 alone", eis)
	}
	// A chassis controller has no node to power.
	err := run(t.Context(), []string{"sim", "power", "on", "x1000c0b0", "-control", control}, func(string) string { return "" }, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "chassis controller") {
		t.Errorf("hms sim power on x1000c0b0: %v, want refused", err)
	}
}
