package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hmsuite/hms/ctl"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/ipxe/bss"
	bssclient "github.com/hmsuite/hms/ipxe/client"
	slsclient "github.com/hmsuite/hms/layout/client"
	"github.com/hmsuite/hms/layout/sls"
	"github.com/hmsuite/hms/nodes/wire"
	"github.com/hmsuite/hms/statemgr/client"
)

// `hms apply -f` end to end: the CLI, the nodes daemon and the sls, hsm
// and bss it writes to, all in this process. What the file declares is
// what the services hold; a re-apply writes nothing (counted by each
// service's own http_requests_total); a changed profile touches only the
// node that moved to it; -prune removes what the file dropped and leaves a
// node made by hand; a bad file is refused at its line with nothing
// written.

// The machine of the file: three nodes whose management addresses are on
// loopback, so the test can ask bss for user-data as each node.
var applyNodes = []struct {
	xname, bootMAC, ip, bmcMAC, bmcIP string
	nid                               int
}{
	{xname: "x3000c0s10b0n0", bootMAC: "02:00:00:00:10:00", ip: "127.31.0.10", bmcMAC: "02:00:00:00:20:00", bmcIP: "127.32.0.10", nid: 10},
	{xname: "x3000c0s11b0n0", bootMAC: "02:00:00:00:10:01", ip: "127.31.0.11", bmcMAC: "02:00:00:00:20:01", bmcIP: "127.32.0.11", nid: 11},
	{xname: "x3000c0s12b0n0", bootMAC: "02:00:00:00:10:02", ip: "127.31.0.12", bmcMAC: "02:00:00:00:20:02", bmcIP: "127.32.0.12", nid: 12},
}

const (
	sshKey   = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIApplyTest student@lab"
	handNode = "x3000c0s20b0n0" // made by hand, never in a nodes file
)

// nodesFile is the file: a profile, and the nodes of applyNodes but skip
// (-1: none), the last one booting profile last.
func nodesFile(skip int, last string) string {
	var b strings.Builder
	b.WriteString("kind: BootProfile\nname: compute\nkernel_url: http://img/vmlinuz-1\ninitrd_url: http://img/initrd-1\n" +
		"kernel_params: console=ttyS0\nssh_key: " + sshKey + "\nadmin_username: student\n")
	if last != "compute" {
		b.WriteString("---\nkind: BootProfile\nname: " + last + "\nkernel_url: http://img/vmlinuz-2\ninitrd_url: http://img/initrd-1\n" +
			"kernel_params: console=ttyS0\nssh_key: " + sshKey + "\nadmin_username: student\n")
	}
	for i, n := range applyNodes {
		if i == skip {
			continue
		}
		profile := "compute"
		if i == len(applyNodes)-1 {
			profile = last
		}
		fmt.Fprintf(&b, "---\nkind: ComputeNode\nxname: %s\nnid: %d\nboot_mac: %s\nmanagement_ip: %s\nbmc_mac: %s\nbmc_ip: %s\n"+
			"bmc_credentials_file: bmc.yaml\narch: X86\ngroups: [compute]\nboot_profile: %s\n", n.xname, n.nid, n.bootMAC, n.ip, n.bmcMAC, n.bmcIP, profile)
	}
	return b.String()
}

func TestApplyNodes(t *testing.T) {
	s := newSuiteOf(t, "sls", "hsm", "bss", "nodes")
	dir := t.TempDir()
	file := filepath.Join(dir, "nodes.yaml")
	writeFile(t, filepath.Join(dir, "bmc.yaml"), "username: root\npassword: initial0\n")
	writeFile(t, file, nodesFile(-1, "compute"))
	makeHandNode(t, s)

	plan := applyPlan(t, s, "apply", "-f", file)
	if n := plan.Counts(); n[wire.ActionCreate] != 4 || n[wire.ActionUpdate]+n[wire.ActionDelete] != 0 || !plan.Applied {
		t.Fatalf("first apply: %v, applied %v; want 4 creates", n, plan.Applied)
	}
	for _, n := range applyNodes {
		checkNode(t, s, n.xname, n.nid, n.bootMAC, n.ip, n.bmcMAC, n.bmcIP, "http://img/vmlinuz-1")
	}
	checkGroup(t, s, "compute", applyNodes[0].xname, applyNodes[1].xname, applyNodes[2].xname)

	// Re-apply: nothing changes, nothing is written (but the apply itself).
	before := writes(t, s)
	before["nodes"]++
	plan = applyPlan(t, s, "apply", "-f", file)
	if n := plan.Counts(); n[wire.ActionUnchanged] != 4 || len(n) != 1 {
		t.Errorf("re-apply: %v, want 4 unchanged", n)
	}
	if after := writes(t, s); !cmp.Equal(before, after) {
		t.Errorf("re-apply wrote (-before +after):\n%s", cmp.Diff(before, after))
	}

	// The last node moves to a profile with another kernel: only its BSS
	// entry changes.
	kept := bootParams(t, s, applyNodes[0].xname, applyNodes[1].xname)
	writeFile(t, file, nodesFile(-1, "compute-new"))
	plan = applyPlan(t, s, "apply", "-f", file)
	if n := plan.Counts(); n[wire.ActionCreate] != 1 || n[wire.ActionUpdate] != 1 || n[wire.ActionUnchanged] != 3 {
		t.Errorf("new kernel: %v, want 1 create (the profile), 1 update (the node)", n)
	}
	if got := bootParams(t, s, applyNodes[0].xname, applyNodes[1].xname); !cmp.Equal(kept, got) {
		t.Errorf("other nodes' boot parameters changed (-before +after):\n%s", cmp.Diff(kept, got))
	}
	last := applyNodes[2]
	checkNode(t, s, last.xname, last.nid, last.bootMAC, last.ip, last.bmcMAC, last.bmcIP, "http://img/vmlinuz-2")

	// The second node leaves the file: -prune removes it everywhere; the
	// node made by hand stays.
	writeFile(t, file, nodesFile(1, "compute-new"))
	plan = applyPlan(t, s, "apply", "-prune", "-f", file)
	if n := plan.Counts(); n[wire.ActionDelete] != 1 || n[wire.ActionCreate]+n[wire.ActionUpdate] != 0 {
		t.Errorf("prune: %v, want 1 delete", n)
	}
	checkGone(t, s, applyNodes[1].xname)
	checkHandNode(t, s)

	// Bad files: refused at their line, nothing sent or written.
	before = writes(t, s)
	for _, bad := range []struct{ name, text, want string }{
		{name: "invalid.yaml", text: "kind: ComputeNode\nxname: x3000c0s30b0n0\n  boot_mac: 02:00:00:00:30:00\n", want: "invalid.yaml:3: invalid YAML"},
		{name: "kind.yaml", text: "kind: ComputeNode\nxname: x3000c0s30b0n0\n---\nkind: Toaster\nname: t\n", want: "kind.yaml:4: unknown kind \"Toaster\""},
		{name: "dup.yaml", text: "kind: ComputeNode\nxname: x3000c0s30b0n0\n---\nkind: ComputeNode\nxname: x3000c0s30b0n0\n",
			want: "dup.yaml:5: xname x3000c0s30b0n0 already used by another ComputeNode at "},
		{name: "mac.yaml", text: "kind: ComputeNode\nxname: x3000c0s30b0n0\nboot_mac: 02:00:00:00:30:00\n---\n" +
			"kind: ComputeNode\nxname: x3000c0s31b0n0\nbmc_mac: 02:00:00:00:30:00\n", want: "mac.yaml:7: MAC 02:00:00:00:30:00 already used by ComputeNode x3000c0s30b0n0 boot_mac at "},
	} {
		path := filepath.Join(dir, bad.name)
		writeFile(t, path, bad.text)
		_, stderr, err := hmsRun(t, s, "apply", "-f", path)
		if err == nil || !strings.Contains(stderr, bad.want) {
			t.Errorf("%s: err %v, stderr %q; want a failure naming %q", bad.name, err, stderr, bad.want)
		}
	}
	if after := writes(t, s); !cmp.Equal(before, after) {
		t.Errorf("bad files wrote (-before +after):\n%s", cmp.Diff(before, after))
	}

	// hms delete -f removes what the file declares, and only that.
	plan = applyPlan(t, s, "delete", "-f", file)
	if n := plan.Counts(); n[wire.ActionDelete] != 4 || len(n) != 1 {
		t.Errorf("delete: %v, want 4 deletes (2 nodes, 2 profiles)", n)
	}
	checkGone(t, s, applyNodes[0].xname)
	checkGone(t, s, applyNodes[2].xname)
	checkHandNode(t, s)
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// hmsRun runs the CLI against s and returns what it printed.
func hmsRun(t *testing.T, s *suite, args ...string) (string, string, error) {
	t.Helper()
	env := map[string]string{"HMS_TOKEN": s.admin, "HOME": t.TempDir()}
	for _, n := range s.daemons {
		env["HMS_"+strings.ToUpper(n)+"_URL"] = s.url(n)
	}
	var out, errb strings.Builder
	err := ctl.Run(t.Context(), args, ctl.Options{Getenv: func(k string) string { return env[k] }, Stdout: &out, Stderr: &errb})
	return out.String(), errb.String(), err
}

// applyPlan runs an hms apply and returns its plan (-o json).
func applyPlan(t *testing.T, s *suite, args ...string) wire.Plan {
	t.Helper()
	out, stderr, err := hmsRun(t, s, append(args, "-o", "json")...)
	if err != nil {
		t.Fatalf("hms %v: %v\n%s%s", args, err, out, stderr)
	}
	var p wire.Plan
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("hms %v: %v in %q", args, err, out)
	}
	for _, c := range p.Changes {
		if c.Error != "" {
			t.Errorf("hms %v: %s %s: %s", args, c.Kind, c.Name, c.Error)
		}
	}
	return p
}

// checkNode checks what SLS, HSM and BSS hold of a node of the file, and
// what bss answers the node itself: its boot script names the kernel and
// its user-data carries the SSH key.
func checkNode(t *testing.T, s *suite, x string, nid int, bootMAC, ip, bmcMAC, bmcIP, kernel string) {
	t.Helper()
	ctx := t.Context()
	hw, err := slsclient.New(s.url("sls"), nil).GetHardware(ctx, x)
	var props sls.NodeProps
	if err == nil {
		err = json.Unmarshal(hw.ExtraProperties, &props)
	}
	if err != nil || props.NID != nid || props.Role != "Compute" {
		t.Errorf("%s: SLS %+v (%v), want NID %d, role Compute", x, props, err, nid)
	}
	h := client.New(s.url("hsm"), nil, "apply-test")
	c, err := h.Component(ctx, x)
	if err != nil || c.NID == nil || *c.NID != nid || c.Role != "Compute" || c.Arch != "X86" {
		t.Errorf("%s: HSM component %+v (%v), want NID %d, role Compute, arch X86", x, c, err, nid)
	}
	for _, want := range []struct{ mac, ip, comp string }{{bootMAC, ip, x}, {bmcMAC, bmcIP, strings.TrimSuffix(x, "n0")}} {
		eis, err := h.EthernetInterfaces(ctx, map[string][]string{"MACAddress": {want.mac}})
		if err != nil || len(eis) != 1 || eis[0].ComponentID != want.comp || len(eis[0].IPAddresses) != 1 || eis[0].IPAddresses[0].IPAddress != want.ip {
			t.Errorf("%s: HSM interface of %s: %+v (%v), want on %s with %s", x, want.mac, eis, err, want.comp, want.ip)
		}
	}
	bp := bootParams(t, s, x)[x]
	if bp.Kernel != kernel || bp.Initrd != "http://img/initrd-1" || !strings.Contains(bp.Params, "console=ttyS0") {
		t.Errorf("%s: BSS %+v, want kernel %s, initrd-1, console=ttyS0", x, bp, kernel)
	}
	// The node boots: relayed DHCP gives it the management address of the
	// file (HSM's reservation for its boot MAC) and iPXE the boot script
	// URL, whose script names the profile's kernel. bss learns the MAC from
	// HSM (an SCN, or a lookup); until then it offers a pool address and
	// the retry script, and a booting node tries again.
	var (
		leased netip.Addr
		script string
		last   error
	)
	if err := waitFor(ctx, 30*time.Second, func() (bool, error) {
		leased, script, last = dhcpBoot(ctx, s, bootMAC)
		return last == nil && leased.String() == ip && strings.Contains(script, kernel), nil
	}); err != nil {
		t.Errorf("%s: booted with %s (%v), want %s and a script naming %s:\n%s", x, leased, last, ip, kernel, script)
	}
	ud := get(t, ip, s.url("bss")+"/user-data")
	if !strings.Contains(ud, sshKey) || !strings.Contains(ud, "name: student") {
		t.Errorf("%s: user-data from %s lacks the key or the user:\n%s", x, ip, ud)
	}
}

// bootParams returns the BSS entry of each node.
func bootParams(t *testing.T, s *suite, xnames ...string) map[string]bss.BootParams {
	t.Helper()
	out := map[string]bss.BootParams{}
	for _, x := range xnames {
		bps, err := bssclient.New(s.url("bss"), nil).BootParams(t.Context(), bss.ParamsQuery{Names: []string{x}})
		if err != nil || len(bps) != 1 {
			t.Errorf("%s: BSS entry %+v (%v), want one", x, bps, err)
			continue
		}
		out[x] = bps[0]
	}
	return out
}

func checkGroup(t *testing.T, s *suite, label string, members ...string) {
	t.Helper()
	gs, err := client.New(s.url("hsm"), nil, "apply-test").Groups(t.Context(), map[string][]string{"group": {label}})
	if err != nil || len(gs) != 1 || !cmp.Equal(gs[0].Members.IDs, members) {
		t.Errorf("HSM group %s: %+v (%v), want members %v", label, gs, err, members)
	}
}

// checkGone checks that SLS, HSM and BSS no longer hold node x.
func checkGone(t *testing.T, s *suite, x string) {
	t.Helper()
	ctx := t.Context()
	if _, err := slsclient.New(s.url("sls"), nil).GetHardware(ctx, x); !errors.Is(err, problem.ErrNotFound) {
		t.Errorf("%s: SLS still has it (%v)", x, err)
	}
	if _, err := client.New(s.url("hsm"), nil, "apply-test").Component(ctx, x); !errors.Is(err, problem.ErrNotFound) {
		t.Errorf("%s: HSM still has it (%v)", x, err)
	}
	if bps, err := bssclient.New(s.url("bss"), nil).BootParams(ctx, bss.ParamsQuery{Names: []string{x}}); err == nil {
		t.Errorf("%s: BSS still has %+v", x, bps)
	}
}

// makeHandNode adds a node the way an admin does without a nodes file:
// SLS (hms node add), HSM, and its own BSS entry (hms boot set).
func makeHandNode(t *testing.T, s *suite) {
	t.Helper()
	admin(t, s, "node", "add", handNode, "-nid", "99", "-role", "Compute")
	body := `{"Components":[{"ID":"` + handNode + `","Type":"Node","State":"Ready","Role":"Compute","NID":99}]}`
	resp, err := http.Post(s.url("hsm")+"/hsm/v2/State/Components", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		t.Fatalf("HSM create %s: %s", handNode, resp.Status)
	}
	admin(t, s, "boot", "set", "-hosts", handNode, "-kernel", "http://img/hand")
	checkHandNode(t, s)
}

func checkHandNode(t *testing.T, s *suite) {
	t.Helper()
	ctx := t.Context()
	if _, err := slsclient.New(s.url("sls"), nil).GetHardware(ctx, handNode); err != nil {
		t.Errorf("hand-made node: SLS: %v", err)
	}
	if c, err := client.New(s.url("hsm"), nil, "apply-test").Component(ctx, handNode); err != nil || c.State != "Ready" {
		t.Errorf("hand-made node: HSM %+v (%v)", c, err)
	}
	if bp := bootParams(t, s, handNode)[handNode]; bp.Kernel != "http://img/hand" {
		t.Errorf("hand-made node: BSS %+v", bp)
	}
}

// get GETs url from local address from (a node's address; "": any) and
// returns the body of a 200.
func get(t *testing.T, from, url string) string {
	t.Helper()
	hc := http.DefaultClient
	if from != "" {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		hc = &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
	}
	resp, err := hc.Get(url)
	if err != nil {
		t.Errorf("GET %s from %q: %v", url, from, err)
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s from %q: %s %s", url, from, resp.Status, b)
	}
	return string(b)
}

// writes counts, per daemon, the requests that may write (every method but
// GET and HEAD, less HSM's POST queries) from each one's own
// http_requests_total.
func writes(t *testing.T, s *suite) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, d := range s.daemons {
		out[d] = countWrites(t.Context(), t, s.url(d)+"/metrics")
	}
	return out
}

func countWrites(ctx context.Context, t *testing.T, url string) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("metrics: %v", err)
	}
	defer resp.Body.Close()
	n := 0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "http_requests_total{") || strings.Contains(line, `method="GET"`) ||
			strings.Contains(line, `method="HEAD"`) || strings.Contains(line, "/Query") {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err == nil {
			n += int(v)
		}
	}
	return n
}
