package ipxe

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	bssclient "github.com/hmsuite/hms/ipxe/client"
)

// TestQEMUProxyBoot boots real firmware through bss in ProxyDHCP mode:
// busybox udhcpd in the namespace, on bss's own address, hands out
// addresses and no boot options; bss (-dhcp-proxy) answers only with boot
// options, DISCOVERs on port 67 and REQUESTs on the PXE boot server port
// 4011. OVMF's UEFI PXE takes udhcpd's
// lease, asks 4011 after the proxy offer and fetches ipxe.efi over TFTP;
// that iPXE, and SeaBIOS's iPXE ROM, then do their own DHCP round, take
// the proxy offer's boot script URL and fetch Unknown-<arch>'s kernel
// through the chain back. Same namespace, VMs and bounds as TestQEMUBoot.
func TestQEMUProxyBoot(t *testing.T) {
	if ns := os.Getenv(qemuNSEnv); ns != "" {
		qemuProxyBootInNS(t)
		return
	}
	runInQEMUNamespace(t, "TestQEMUProxyBoot", "busybox")
}

func qemuProxyBootInNS(t *testing.T) {
	fws := firmwares(t)
	images := newImageServer(t, qemuFiles(fws))
	_, bss := qemuBSS(t, "-dhcp-interface", qemuBridge, "-dhcp-proxy",
		"-tftp-listen", qemuSrvIP+":69", "-tftp-root", qemuTFTPRoot(t, fws))
	startUdhcpd(t)
	startRadvd(t)
	for _, fw := range fws {
		t.Run(fw.name, func(t *testing.T) { proxyBootOnce(t, fw, bss, images) })
	}
}

// proxyBootOnce boots one VM until it has fetched its Unknown-<arch>
// kernel: the boot script came through the proxy offers.
func proxyBootOnce(t *testing.T, fw firmware, bss *Daemon, images *imageServer) {
	grew, fail := bootUnknown(t, fw, bss, images)
	want := []string{`bss_bootscripts_total{kind="chain"}`, `bss_bootscripts_total{kind="unknown"}`, `dhcp_replies_total{type="OFFER"}`}
	if fw.tftp {
		// EDK2 asks the boot server before it fetches the file.
		want = append(want, `tftp_transfers_total{result="ok"}`, `dhcp_replies_total{type="ACK"}`)
	}
	for _, series := range want {
		if !grew(series) {
			fail("metric %s did not grow in the proxy boot", series)
		}
	}
	if ls, err := bssclient.New(bss.URL(), nil).Leases(t.Context(), LeaseQuery{}); err != nil || len(ls) != 0 {
		fail("the proxy holds leases: %+v, %v", ls, err)
	}
}

// startUdhcpd runs busybox's DHCP server on the bridge: addresses, a mask
// and a lease time, no next-server and no boot file.
func startUdhcpd(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	conf := filepath.Join(dir, "udhcpd.conf")
	leases := filepath.Join(dir, "udhcpd.leases")
	if err := os.WriteFile(leases, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte("start 10.79.0.100\nend 10.79.0.150\ninterface "+qemuBridge+"\nlease_file "+leases+
		"\npidfile "+filepath.Join(dir, "udhcpd.pid")+"\noption subnet 255.255.255.0\noption lease 600\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	busybox, _ := exec.LookPath("busybox")
	startChild(t, exec.Command(busybox, "udhcpd", "-f", conf))
}
