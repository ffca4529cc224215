package ipxe

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// A real firmware boots through bss: qemu (TCG, no KVM) with OVMF, whose own
// UEFI PXE client asks our DHCP server, fetches ipxe.efi from our TFTP
// server, and runs it; iPXE asks DHCP again and fetches its script from bss.
// The NIC is virtio-net without an option ROM, so the first stage is the
// firmware's PXE and not the iPXE ROM qemu would otherwise load (that one
// says "iPXE" in option 77 and would skip TFTP).
//
// Everything runs inside a network namespace the test creates: the test
// binary re-executes itself there (qemuNSEnv names the namespace), so HSM,
// bss, its DHCP and TFTP servers, radvd and qemu share one isolated network
// and nothing touches the host's.

// qemuNSEnv, set in the re-executed test, names the namespace it runs in.
const qemuNSEnv = "HMS_TEST_QEMU_NETNS"

// The VM's network inside the namespace (the namespace's own, so fixed
// names and addresses cannot collide with another test's).
const (
	qemuBridge = "br0"
	qemuTap    = "tap0"
	qemuSrvIP  = "10.79.0.1"
	qemuMAC    = "52:54:00:79:00:01"
	qemuXname  = "x3000c0s9b0n0"
)

// OVMF's firmware and variable store (Debian package ovmf).
var ovmfCode, ovmfVars = "/usr/share/OVMF/OVMF_CODE_4M.fd", "/usr/share/OVMF/OVMF_VARS_4M.fd"

func TestQEMUBoot(t *testing.T) {
	if ns := os.Getenv(qemuNSEnv); ns != "" {
		qemuBootInNS(t)
		return
	}
	testpeer.Require(t, "ip")
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("the qemu boot test needs root (network namespaces) under CI=true")
		}
		t.Skip("the qemu boot test needs root (network namespaces)")
	}
	testpeer.Require(t, "qemu-system-x86_64")
	testpeer.Require(t, "radvd")
	for _, f := range []string{ovmfCode, ovmfVars, "/usr/lib/ipxe/ipxe.efi"} {
		requireFile(t, f)
	}
	ns := fmt.Sprintf("hmsqemu%d", os.Getpid())
	mustRun(t, "ip", "netns", "add", ns)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	for _, args := range [][]string{
		{"link", "set", "lo", "up"},
		{"link", "add", qemuBridge, "type", "bridge"},
		{"addr", "add", qemuSrvIP + "/24", "dev", qemuBridge},
		{"link", "set", qemuBridge, "up"},
		{"tuntap", "add", qemuTap, "mode", "tap"},
		{"link", "set", qemuTap, "master", qemuBridge},
		{"link", "set", qemuTap, "up"},
	} {
		mustRun(t, "ip", append([]string{"-n", ns}, args...)...)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute) // bounds a hung VM, times nothing
	defer cancel()
	cmd := exec.CommandContext(ctx, "ip", "netns", "exec", ns, self, "-test.run", "^TestQEMUBoot$", "-test.v", "-test.timeout", "3m")
	cmd.Env = append(os.Environ(), qemuNSEnv+"="+ns)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.CombinedOutput()
	t.Logf("test in namespace %s:\n%s", ns, out)
	if err != nil {
		t.Fatalf("test in namespace %s: %v", ns, err)
	}
}

// qemuBootInNS is the test proper, inside the namespace: an unknown MAC
// boots Unknown-x86_64; once HSM knows the node and it has boot parameters
// of its own, its next chain fetches its own kernel and initrd.
func qemuBootInNS(t *testing.T) {
	root := t.TempDir()
	efi, err := os.ReadFile("/usr/lib/ipxe/ipxe.efi") // a symlink leaving any TFTP root: copy it in
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "ipxe.efi"), efi, 0o644); err != nil {
		t.Fatal(err)
	}
	images := newImageServer(t, map[string][]byte{
		"/discovery/vmlinuz": []byte("not a kernel: iPXE cannot boot it and retries"),
		"/node/vmlinuz":      efi, // an EFI image iPXE can select, so it goes on to the initrd
		"/node/initrd":       []byte("initrd"),
	})
	hc, bss := withHSM(t, func(c *DaemonConfig) {
		f := cli.NewFlagSet("bss", func(string) string { return "" }, io.Discard)
		fl := RegisterFlags(f)
		args := []string{"-listen", ":0", "-dhcp-interface", qemuBridge, "-dhcp-subnet", "10.79.0.0/24",
			"-dhcp-range", "10.79.0.100-10.79.0.150", "-tftp-listen", qemuSrvIP + ":69", "-tftp-root", root,
			"-retry-delay", "1s", "-retrieval-delay", "1s"}
		if err := f.Parse(args); err != nil {
			t.Fatal(err)
		}
		fc, err := fl.Config()
		if err != nil {
			t.Fatal(err)
		}
		c.Listen, c.AdvertiseURL, c.DHCP, c.TFTP = fc.Listen, fc.AdvertiseURL, fc.DHCP, fc.TFTP
		c.RetryDelay, c.RetrievalDelay = fc.RetryDelay, fc.RetrievalDelay
	})
	bc := NewClient(bss.URL(), nil)
	if err := bc.PutBootParams(t.Context(), BootParams{Hosts: []string{"Unknown-x86_64"},
		Kernel: images.url + "/discovery/vmlinuz", Params: "discovery"}); err != nil {
		t.Fatal(err)
	}
	startRadvd(t)
	serial := startQEMU(t)
	fail := func(format string, args ...any) {
		t.Helper()
		b, _ := os.ReadFile(serial)
		t.Fatalf("%s\nVM console:\n%s", fmt.Sprintf(format, args...), b)
	}

	// 1. Unknown: firmware DHCP, TFTP ipxe.efi, iPXE DHCP, the chain back
	// for the architecture, Unknown-x86_64's kernel.
	if err := images.await(t, "/discovery/vmlinuz"); err != nil {
		fail("the discovery kernel was never fetched: %v", err)
	}
	leases, err := bc.Leases(t.Context(), LeaseQuery{MACs: []string{qemuMAC}, States: []string{LeaseBound}})
	if err != nil || len(leases) != 1 {
		fail("DHCP leases of %s: %+v, %v", qemuMAC, leases, err)
	}
	leased := leases[0].IPAddress
	m := metricsText(t, bss.URL())
	for _, want := range []string{`tftp_transfers_total{result="ok"}`, `bss_bootscripts_total{kind="chain"}`, `bss_bootscripts_total{kind="unknown"}`} {
		if metricValue(m, want) < 1 {
			fail("metric %s is %v after the discovery boot", want, metricValue(m, want))
		}
	}

	// 2. Known: the node joins HSM with its MAC and address and gets boot
	// parameters of its own; its next chain (the retry after the discovery
	// kernel fails) boots them.
	if err := bc.PutBootParams(t.Context(), BootParams{Hosts: []string{qemuXname},
		Kernel: images.url + "/node/vmlinuz", Initrd: images.url + "/node/initrd", Params: "console=ttyS0"}); err != nil {
		t.Fatal(err)
	}
	err = hc.PostComponents(t.Context(), []hsm.Component{{ID: qemuXname, Type: "Node", State: "On", Role: "Compute"}}, false)
	if err == nil {
		err = hc.CreateEthernetInterface(t.Context(), hsm.EthernetInterface{MACAddress: qemuMAC, ComponentID: qemuXname,
			IPAddresses: []hsm.IPAddressMapping{{IPAddress: leased}}})
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/node/vmlinuz", "/node/initrd"} {
		if err := images.await(t, p); err != nil {
			fail("the node's own %s was never fetched: %v", p, err)
		}
	}
	hist, err := bc.EndpointHistory(t.Context(), qemuXname)
	if err != nil || len(hist) == 0 || hist[0].Endpoint != EndpointBootscript {
		fail("endpoint history of %s: %+v, %v", qemuXname, hist, err)
	}
	if metricValue(metricsText(t, bss.URL()), `bss_bootscripts_total{kind="known"}`) < 1 {
		fail("no known-node boot script counted")
	}
}

// imageServer serves kernels and initrds on the bridge and records which
// paths were asked for.
type imageServer struct {
	url string
	mu  sync.Mutex
	got map[string]chan struct{}
}

func newImageServer(t *testing.T, files map[string][]byte) *imageServer {
	t.Helper()
	ln, err := net.Listen("tcp", qemuSrvIP+":0")
	if err != nil {
		t.Fatal(err)
	}
	s := &imageServer{url: "http://" + ln.Addr().String(), got: map[string]chan struct{}{}}
	for p := range files {
		s.got[p] = make(chan struct{})
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		s.mu.Lock()
		select {
		case <-s.got[r.URL.Path]:
		default:
			close(s.got[r.URL.Path])
		}
		s.mu.Unlock()
		w.Write(b)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return s
}

// await waits until path was fetched, or fails after a bound (a VM that
// never gets there; the bound times nothing).
func (s *imageServer) await(t *testing.T, path string) error {
	ctx, cancel := context.WithTimeout(t.Context(), 150*time.Second)
	defer cancel()
	select {
	case <-s.got[path]:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// startRadvd answers iPXE's IPv6 router solicitations on the bridge; without
// an advertisement each iPXE DHCP round waits ~13 s for one.
func startRadvd(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	conf := filepath.Join(dir, "radvd.conf")
	os.WriteFile(conf, []byte("interface "+qemuBridge+" { AdvSendAdvert on; MinRtrAdvInterval 3; MaxRtrAdvInterval 10; AdvDefaultLifetime 0; };\n"), 0o644)
	radvd, _ := exec.LookPath("radvd")
	startChild(t, exec.Command(radvd, "-n", "-C", conf, "-p", filepath.Join(dir, "radvd.pid"), "-m", "stderr"))
}

// startQEMU boots the VM from the network and returns its console log.
func startQEMU(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	vars := filepath.Join(dir, "vars.fd")
	b, err := os.ReadFile(ovmfVars)
	if err == nil {
		err = os.WriteFile(vars, b, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	serial := filepath.Join(dir, "serial.log")
	qemu, _ := exec.LookPath("qemu-system-x86_64")
	startChild(t, exec.Command(qemu, "-accel", "tcg", "-machine", "q35", "-m", "256", "-nographic", "-nodefaults",
		"-monitor", "none", "-serial", "file:"+serial,
		"-drive", "if=pflash,format=raw,readonly=on,file="+ovmfCode, "-drive", "if=pflash,format=raw,file="+vars,
		"-netdev", "tap,id=n0,ifname="+qemuTap+",script=no,downscript=no",
		"-device", "virtio-net-pci,netdev=n0,romfile=,mac="+qemuMAC, "-boot", "n"))
	return serial
}

// startChild starts cmd and kills exactly it when the test ends (or the
// test process dies).
func startChild(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("%s: %s", filepath.Base(cmd.Path), out.String())
		}
	})
}

// metricsText is bss's /metrics page.
func metricsText(t *testing.T, base string) string {
	t.Helper()
	_, body := get(t, base+"/metrics")
	return body
}

// metricValue is the value of the sample line starting with series (-1
// when absent).
func metricValue(text, series string) float64 {
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			var f float64
			fmt.Sscan(v, &f)
			return f
		}
	}
	return -1
}

func mustRun(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// requireFile stops the test when a peer's file is missing (skip on a
// laptop, fail under CI=true).
func requireFile(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s missing under CI=true (make peers installs it)", path)
	}
	t.Skipf("%s missing (run `make peers` as root)", path)
}
