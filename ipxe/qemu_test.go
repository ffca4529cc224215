package ipxe

import (
	"bufio"
	"context"
	"errors"
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

	bssclient "github.com/hmsuite/hms/ipxe/client"

	"github.com/hmsuite/hms/internal/cli"
	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/statemgr/client"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// Real firmware boots through bss, twice: qemu (TCG, no KVM) with OVMF,
// whose own UEFI PXE client asks our DHCP server, fetches ipxe.efi from our
// TFTP server and runs it (the NIC is virtio-net without an option ROM, so
// the first stage is the firmware's PXE); then SeaBIOS with qemu's iPXE
// option ROM, which says "iPXE" in option 77 and is sent straight to the
// boot script. Either way iPXE then fetches its script from bss.
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
)

// OVMF's firmware and variable store (Debian package ovmf).
var ovmfCode, ovmfVars = "/usr/share/OVMF/OVMF_CODE_4M.fd", "/usr/share/OVMF/OVMF_VARS_4M.fd"

func TestQEMUBoot(t *testing.T) {
	if ns := os.Getenv(qemuNSEnv); ns != "" {
		qemuBootInNS(t)
		return
	}
	runInQEMUNamespace(t, "TestQEMUBoot")
}

// runInQEMUNamespace checks the peers every qemu test needs (and peers),
// creates a network namespace with the bridge and the tap, and runs test
// (a top-level test's name) again inside it, with qemuNSEnv set.
func runInQEMUNamespace(t *testing.T, test string, peers ...string) {
	testpeer.Require(t, "ip")
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("the qemu boot test needs root (network namespaces) under CI=true")
		}
		t.Skip("the qemu boot test needs root (network namespaces)")
	}
	for _, p := range append([]string{"qemu-system-x86_64", "radvd"}, peers...) {
		testpeer.Require(t, p)
	}
	for _, f := range []string{ovmfCode, ovmfVars, "/usr/lib/ipxe/ipxe.efi", "/usr/lib/ipxe/ipxe.lkrn", "/usr/lib/ipxe/qemu/efi-e1000.rom"} {
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
	// The bounds stop a hung VM and time nothing: TCG on a loaded machine is
	// slow, and the test in the namespace bounds each wait itself, so it
	// fails with the VM's console before this kills it.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ip", "netns", "exec", ns, self, "-test.run", "^"+test+"$", "-test.v", "-test.timeout", "9m")
	cmd.Env = append(os.Environ(), qemuNSEnv+"="+ns)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.CombinedOutput()
	t.Logf("test in namespace %s:\n%s", ns, out)
	if err != nil {
		t.Fatalf("test in namespace %s: %v", ns, err)
	}
}

// firmware is one way a VM boots from the network.
type firmware struct {
	name, mac, xname string
	// arch is iPXE's ${buildarch}, the Unknown-<arch> entry it boots.
	arch string
	// kernel is a file iPXE can select as a kernel, so it goes on to the
	// initrd (iPXE itself, in the format this firmware runs).
	kernel []byte
	// tftp: the firmware's own PXE client fetches iPXE over TFTP first.
	tftp bool
	args []string // qemu's machine, firmware and NIC
}

func firmwares(t *testing.T) []firmware {
	efi, lkrn := mustRead(t, "/usr/lib/ipxe/ipxe.efi"), mustRead(t, "/usr/lib/ipxe/ipxe.lkrn")
	vars := filepath.Join(t.TempDir(), "vars.fd")
	if err := os.WriteFile(vars, mustRead(t, ovmfVars), 0o644); err != nil {
		t.Fatal(err)
	}
	return []firmware{
		// OVMF's own UEFI PXE on a virtio NIC without option ROM: DHCP,
		// TFTP ipxe.efi, then iPXE.
		{name: "uefi", mac: "52:54:00:79:00:01", xname: "x3000c0s9b0n0", arch: "x86_64", kernel: efi, tftp: true,
			args: []string{"-machine", "q35", "-drive", "if=pflash,format=raw,readonly=on,file=" + ovmfCode,
				"-drive", "if=pflash,format=raw,file=" + vars, "-device", "virtio-net-pci,netdev=n0,romfile=,mac=52:54:00:79:00:01"}},
		// SeaBIOS with qemu's iPXE option ROM (Debian ipxe-qemu): iPXE asks
		// DHCP itself and goes straight to the boot script. The ROM is a
		// 32-bit build, so ${buildarch} is i386.
		{name: "bios", mac: "52:54:00:79:00:02", xname: "x3000c0s10b0n0", arch: "i386", kernel: lkrn,
			args: []string{"-device", "e1000,netdev=n0,mac=52:54:00:79:00:02"}},
	}
}

// qemuBootInNS is the test proper, inside the namespace, once per
// firmware: an unknown MAC boots Unknown-<arch>; once HSM knows the node
// and it has boot parameters of its own, its next chain fetches its own
// kernel and initrd.
func qemuBootInNS(t *testing.T) {
	fws := firmwares(t)
	images := newImageServer(t, qemuFiles(fws))
	hc, bss := qemuBSS(t, "-dhcp-interface", qemuBridge, "-dhcp-subnet", "10.79.0.0/24", "-dhcp-range", "10.79.0.100-10.79.0.150",
		"-tftp-listen", qemuSrvIP+":69", "-tftp-root", qemuTFTPRoot(t, fws))
	startRadvd(t)
	for _, fw := range fws {
		t.Run(fw.name, func(t *testing.T) { bootOnce(t, fw, hc, bss, images) })
	}
}

// qemuTFTPRoot is a TFTP root with ipxe.efi in it (Debian's is a symlink
// leaving any TFTP root).
func qemuTFTPRoot(t *testing.T, fws []firmware) string {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "ipxe.efi"), fws[0].kernel, 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// qemuFiles are the images the firmwares' boots ask for.
func qemuFiles(fws []firmware) map[string][]byte {
	files := map[string][]byte{}
	for _, fw := range fws {
		// Asked for and 404: iPXE's `kernel` fails and the script retries.
		// (A file of junk would not do: BIOS iPXE takes any file for a PXE
		// boot program and jumps into it.)
		files["/"+fw.name+"/discovery"] = nil
		files["/"+fw.name+"/kernel"] = fw.kernel
		files["/"+fw.name+"/initrd"] = []byte("initrd")
	}
	return files
}

// qemuBSS starts HSM and bss, bss with its flags args as `bss` parses
// them (its boot chain), short retry delays and an HTTP port of its own.
func qemuBSS(t *testing.T, args ...string) (*client.Client, *Daemon) {
	t.Helper()
	return withHSM(t, func(c *DaemonConfig) {
		f := cli.NewFlagSet("bss", func(string) string { return "" }, io.Discard)
		fl := RegisterFlags(f)
		if err := f.Parse(append([]string{"-listen", ":0", "-retry-delay", "1s", "-retrieval-delay", "1s"}, args...)); err != nil {
			t.Fatal(err)
		}
		fc, err := fl.Config()
		if err != nil {
			t.Fatal(err)
		}
		c.Listen, c.AdvertiseURL, c.DHCP, c.TFTP = fc.Listen, fc.AdvertiseURL, fc.DHCP, fc.TFTP
		c.RetryDelay, c.RetrievalDelay = fc.RetryDelay, fc.RetrievalDelay
	})
}

// bootOnce boots one VM (sequentially: each keeps a core busy) until it
// has fetched its own initrd.
func bootOnce(t *testing.T, fw firmware, hc *client.Client, bss *Daemon, images *imageServer) {
	bc := bssclient.New(bss.URL(), nil)
	// 1. Unknown: DHCP (with TFTP of ipxe.efi before iPXE's own for the
	// UEFI firmware), the chain back for the architecture, Unknown-<arch>'s
	// kernel.
	grew, fail := bootUnknown(t, fw, bss, images)
	leases, err := bc.Leases(t.Context(), LeaseQuery{MACs: []string{fw.mac}, States: []string{LeaseBound}})
	if err != nil || len(leases) != 1 {
		fail("DHCP leases of %s: %+v, %v", fw.mac, leases, err)
	}
	want := []string{`bss_bootscripts_total{kind="chain"}`, `bss_bootscripts_total{kind="unknown"}`}
	if fw.tftp {
		// EDK2's UEFI PXE asks for windowsize 4 (PcdPxeTftpWindowSize).
		want = append(want, `tftp_transfers_total{result="ok"}`, `tftp_windowed_transfers_total`)
	}
	for _, series := range want {
		if !grew(series) {
			fail("metric %s did not grow in the discovery boot", series)
		}
	}

	// 2. Known: the node joins HSM with its MAC and address and gets boot
	// parameters of its own; its next chain (the retry after the discovery
	// kernel fails) boots them.
	if err := bc.PutBootParams(t.Context(), BootParams{Hosts: []string{fw.xname}, Kernel: images.url + "/" + fw.name + "/kernel",
		Initrd: images.url + "/" + fw.name + "/initrd", Params: "console=ttyS0"}); err != nil {
		t.Fatal(err)
	}
	err = hc.PostComponents(t.Context(), []hsm.Component{{ID: fw.xname, Type: "Node", State: "On", Role: "Compute"}}, false)
	if err == nil {
		// bss's DHCP server wrote the MAC unnamed at its lease; HSM's walk
		// names it, as this PATCH does.
		ips := []hsm.IPAddressMapping{{IPAddress: leases[0].IPAddress}}
		_, err = hc.PatchEthernetInterface(t.Context(), fw.mac, hsm.EthernetPatch{ComponentID: &fw.xname, IPAddresses: &ips})
		if errors.Is(err, problem.ErrNotFound) { // not written yet
			err = hc.CreateEthernetInterface(t.Context(), hsm.EthernetInterface{MACAddress: fw.mac, ComponentID: fw.xname, IPAddresses: ips})
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/" + fw.name + "/kernel", "/" + fw.name + "/initrd"} {
		if err := images.await(t, p); err != nil {
			fail("the node's own %s was never fetched: %v", p, err)
		}
	}
	t.Log("known node fetched its own kernel and initrd")
	hist, err := bc.EndpointHistory(t.Context(), fw.xname)
	if err != nil || len(hist) == 0 || hist[0].Endpoint != EndpointBootscript {
		fail("endpoint history of %s: %+v, %v", fw.xname, hist, err)
	}
	if !grew(`bss_bootscripts_total{kind="known"}`) {
		fail("no known-node boot script counted")
	}
}

// bootUnknown gives Unknown-<arch> a discovery kernel, boots fw's VM and
// waits until the VM has fetched that kernel. grew reports whether a
// metric series of bss grew since before the boot; fail fails the test
// with the VM's console.
func bootUnknown(t *testing.T, fw firmware, bss *Daemon, images *imageServer) (grew func(series string) bool, fail func(format string, args ...any)) {
	t.Helper()
	if err := bssclient.New(bss.URL(), nil).PutBootParams(t.Context(), BootParams{Hosts: []string{"Unknown-" + fw.arch},
		Kernel: images.url + "/" + fw.name + "/discovery", Params: "discovery"}); err != nil {
		t.Fatal(err)
	}
	before := metricsText(t, bss.URL())
	serial := startQEMU(t, fw.args)
	fail = func(format string, args ...any) {
		t.Helper()
		b, _ := os.ReadFile(serial)
		t.Fatalf("%s\nVM console:\n%s", fmt.Sprintf(format, args...), b)
	}
	grew = func(series string) bool {
		return metricValue(metricsText(t, bss.URL()), series) > max(metricValue(before, series), 0)
	}
	if err := images.await(t, "/"+fw.name+"/discovery"); err != nil {
		fail("the discovery kernel was never fetched: %v", err)
	}
	t.Log("unknown node fetched Unknown-" + fw.arch + "'s kernel")
	return grew, fail
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// imageServer serves kernels and initrds on the bridge and records which
// paths were asked for (a nil file is recorded, then 404).
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
		if ok {
			s.mu.Lock()
			select {
			case <-s.got[r.URL.Path]:
			default:
				close(s.got[r.URL.Path])
			}
			s.mu.Unlock()
		}
		if b == nil {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return s
}

// await waits until path was fetched, or fails after a bound (a VM that
// never gets there; the bound times nothing).
func (s *imageServer) await(t *testing.T, path string) error {
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
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

// startQEMU boots a VM from the network on the tap, with args for its
// machine, firmware and NIC (netdev n0), and returns its console log. It
// is killed when the (sub)test ends.
func startQEMU(t *testing.T, args []string) string {
	t.Helper()
	serial := filepath.Join(t.TempDir(), "serial.log")
	qemu, _ := exec.LookPath("qemu-system-x86_64")
	base := []string{"-accel", "tcg", "-m", "256", "-nographic", "-nodefaults", "-monitor", "none", "-serial", "file:" + serial,
		"-netdev", "tap,id=n0,ifname=" + qemuTap + ",script=no,downscript=no", "-boot", "n"}
	startChild(t, exec.Command(qemu, append(base, args...)...))
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
