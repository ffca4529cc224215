package dhcp

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"golang.org/x/sys/unix"

	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/sqldb"
	"github.com/hmsuite/hms/internal/testpeer"
)

// Real DHCP clients (busybox udhcpc, ISC dhclient) against the server, in
// two network namespaces joined by a veth pair that each test creates and
// deletes. Names carry the pid and a counter, so parallel packages and
// tests never collide.

var nsSeq atomic.Int32

// link is a server namespace and a client namespace joined by a veth pair;
// the server end has 10.77.0.1/24.
type link struct {
	srvNS, cliNS string
	srvIf, cliIf string
	cliMAC       string
}

func requireRoot(t *testing.T) {
	t.Helper()
	testpeer.Require(t, "ip")
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("network namespace tests need root under CI=true")
		}
		t.Skip("network namespace tests need root")
	}
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

func newLink(t *testing.T) *link {
	t.Helper()
	requireRoot(t)
	n := nsSeq.Add(1)
	id := fmt.Sprintf("%d%d", os.Getpid()%100000, n)
	l := &link{srvNS: "hmsdhcp-s" + id, cliNS: "hmsdhcp-c" + id, srvIf: "hds" + id, cliIf: "hdc" + id,
		cliMAC: fmt.Sprintf("02:77:%02x:%02x:%02x:01", os.Getpid()&0xff, (os.Getpid()>>8)&0xff, n&0xff)}
	run(t, "ip", "netns", "add", l.srvNS)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", l.srvNS).Run() })
	run(t, "ip", "netns", "add", l.cliNS)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", l.cliNS).Run() })
	run(t, "ip", "link", "add", l.srvIf, "netns", l.srvNS, "type", "veth", "peer", "name", l.cliIf, "netns", l.cliNS)
	run(t, "ip", "-n", l.cliNS, "link", "set", l.cliIf, "address", l.cliMAC)
	run(t, "ip", "-n", l.srvNS, "addr", "add", "10.77.0.1/24", "dev", l.srvIf)
	for _, c := range [][]string{{l.srvNS, l.srvIf}, {l.srvNS, "lo"}, {l.cliNS, l.cliIf}, {l.cliNS, "lo"}} {
		run(t, "ip", "-n", c[0], "link", "set", c[1], "up")
	}
	return l
}

// inNS runs fn on an OS thread moved into namespace ns; sockets fn opens
// stay in ns.
func inNS(t *testing.T, ns string, fn func()) {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	self, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
	if err != nil {
		t.Fatal(err)
	}
	defer self.Close()
	target, err := os.Open("/run/netns/" + ns)
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
			panic(err) // the thread must not go back to the pool in ns
		}
	}()
	fn()
}

func nsConfig() Config {
	return Config{ServerID: netip.MustParseAddr("10.77.0.1"), BootURL: "http://10.77.0.1:27778", Files: DefaultBootFiles(),
		Subnets: []Subnet{
			{Prefix: netip.MustParsePrefix("10.77.0.0/24"), First: netip.MustParseAddr("10.77.0.100"), Last: netip.MustParseAddr("10.77.0.150"),
				Router: netip.MustParseAddr("10.77.0.1"), DNS: []netip.Addr{netip.MustParseAddr("10.77.0.1")}, Lease: time.Hour},
			{Prefix: netip.MustParsePrefix("10.78.0.0/24"), First: netip.MustParseAddr("10.78.0.10"), Last: netip.MustParseAddr("10.78.0.20"), Relayed: true},
		}}
}

// nsServer runs the server on the link's server end (port 67, bound to the
// device) over db until stop is called or the test ends.
func nsServer(t *testing.T, l *link, db string, pub bus.Publisher) (srv *Server, stop func()) {
	t.Helper()
	return nsServerWith(t, l, db, pub, nsConfig())
}

// nsServerWith is nsServer with the handler's configuration cfg.
func nsServerWith(t *testing.T, l *link, db string, pub bus.Publisher, cfg Config) (srv *Server, stop func()) {
	t.Helper()
	var sdb *sqldb.DB
	inNS(t, l.srvNS, func() {
		var err error
		if sdb, err = sqldb.Open(t.Context(), db, nil); err != nil {
			t.Fatal(err)
		}
		srv, err = Listen(t.Context(), ServerConfig{Handler: cfg, Interface: l.srvIf, Publisher: pub}, sdb)
		if err != nil {
			t.Fatal(err)
		}
	})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("run: %v", err)
			}
			sdb.Close()
		})
	}
	t.Cleanup(stop)
	return srv, stop
}

// hookScript writes a client hook that appends its environment to out.
func hookScript(t *testing.T, out string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "hook.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n{ echo \"event=$1 $reason\"; env; echo; } >> "+out+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// env parses the last block of a hook's output: the values at binding.
func lastEnv(t *testing.T, out string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(strings.TrimSpace(string(b)), "\n\n")
	m := map[string]string{}
	for _, line := range strings.Split(blocks[len(blocks)-1], "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			m[k] = v
		}
	}
	return m
}

// udhcpc runs busybox udhcpc in the client namespace until it has a lease.
func udhcpc(t *testing.T, l *link, args ...string) map[string]string {
	t.Helper()
	bb := testpeer.Require(t, "busybox")
	out := filepath.Join(t.TempDir(), "env")
	all := append([]string{"netns", "exec", l.cliNS, bb, "udhcpc", "-i", l.cliIf, "-f", "-q", "-n", "-t", "5", "-T", "2",
		"-s", hookScript(t, out)}, args...)
	cmd := exec.CommandContext(t.Context(), "ip", all...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("udhcpc: %v\n%s", err, b)
	}
	return lastEnv(t, out)
}

// dhclient runs ISC dhclient -d with conf in the client namespace until it
// reports a binding, then stops exactly that process. It returns the hook's
// environment plus lease_filename from the lease file.
func dhclient(t *testing.T, l *link, conf string) map[string]string {
	t.Helper()
	bin := testpeer.Require(t, "dhclient")
	dir := t.TempDir()
	out := filepath.Join(dir, "env")
	cf := filepath.Join(dir, "dhclient.conf")
	if err := os.WriteFile(cf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ip", "netns", "exec", l.cliNS, bin, "-d", "-4", "-sf", hookScript(t, out), "-cf", cf,
		"-lf", filepath.Join(dir, "leases"), "-pf", filepath.Join(dir, "pid"), l.cliIf)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill() // ip netns exec execs dhclient: this is its pid
		cmd.Wait()
	}()
	bound := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "bound to ") {
				close(bound)
				break
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	select {
	case <-bound:
	case <-time.After(30 * time.Second): // bounds a failure; times nothing
		t.Fatal("dhclient never bound")
	}
	// dhclient keeps a filename with shell metacharacters (iPXE's
	// ${net0/mac}) out of the hook's environment; its lease file has it.
	lf, err := os.ReadFile(filepath.Join(dir, "leases"))
	if err != nil {
		t.Fatal(err)
	}
	env := lastEnv(t, out)
	for _, line := range strings.Split(string(lf), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "filename "); ok {
			env["lease_filename"] = strings.Trim(strings.TrimSuffix(v, ";"), `"`)
		}
	}
	return env
}

func TestRealClientsGetLeasesAndBootFiles(t *testing.T) {
	l := newLink(t)
	nsServer(t, l, filepath.Join(t.TempDir(), "bss.db"), nil)
	for _, tc := range []struct {
		name string
		args []string
		file string
	}{
		{name: "BIOS", args: []string{"-V", "PXEClient:Arch:00000:UNDI:002001", "-x", "0x5d:0000"}, file: "undionly.kpxe"},
		{name: "x86-64 UEFI", args: []string{"-V", "PXEClient:Arch:00007:UNDI:003016", "-x", "0x5d:0007"}, file: "ipxe.efi"},
		{name: "iPXE", args: []string{"-x", "0x4d:69505845", "-x", "0x5d:0007"}, file: "http://10.77.0.1:27778/boot/v1/bootscript?mac=${net0/mac}"},
	} {
		t.Run("udhcpc "+tc.name, func(t *testing.T) {
			env := udhcpc(t, l, append(tc.args, "-O", "bootfile")...)
			if env["ip"] != "10.77.0.100" || env["router"] != "10.77.0.1" || env["subnet"] != "255.255.255.0" || env["serverid"] != "10.77.0.1" {
				t.Errorf("lease %v", env)
			}
			if got := env["boot_file"]; got != tc.file {
				t.Errorf("boot_file %q, want %q", got, tc.file)
			}
			if tc.name != "iPXE" && env["siaddr"] != "10.77.0.1" {
				t.Errorf("siaddr %q", env["siaddr"])
			}
		})
	}
	for _, tc := range []struct {
		name, send, file string
	}{
		{name: "BIOS", send: "send arch 0;\nsend vendor-class-identifier \"PXEClient:Arch:00000:UNDI:002001\";\n", file: "undionly.kpxe"},
		{name: "x86-64 UEFI", send: "send arch 7;\nsend vendor-class-identifier \"PXEClient:Arch:00007:UNDI:003016\";\n", file: "ipxe.efi"},
		{name: "iPXE", send: "send arch 7;\nsend user-class \"iPXE\";\n", file: "http://10.77.0.1:27778/boot/v1/bootscript?mac=${net0/mac}"},
	} {
		t.Run("dhclient "+tc.name, func(t *testing.T) {
			env := dhclient(t, l, "option arch code 93 = unsigned integer 16;\n"+tc.send+
				"request subnet-mask, routers, domain-name-servers, host-name;\n")
			if env["new_ip_address"] != "10.77.0.100" || env["new_routers"] != "10.77.0.1" || env["new_subnet_mask"] != "255.255.255.0" {
				t.Errorf("lease %v", env)
			}
			if got := env["lease_filename"]; got != tc.file {
				t.Errorf("filename %q, want %q", got, tc.file)
			}
		})
	}
}

func TestRealClientRestartKeepsLease(t *testing.T) {
	l := newLink(t)
	db := filepath.Join(t.TempDir(), "bss.db")
	_, stop := nsServer(t, l, db, nil)
	first := udhcpc(t, l)["ip"]
	stop()
	srv, _ := nsServer(t, l, db, nil)
	// Another client asks for that address: the restarted server keeps it.
	relayed := relayedDORA(t, l, srv, "02:77:00:00:00:99", "10.77.0.5", first)
	if relayed == first {
		t.Fatalf("restarted server gave the leased %s to another client", first)
	}
	if again := udhcpc(t, l)["ip"]; again != first {
		t.Errorf("client got %s after the restart, had %s", again, first)
	}
}

func TestRelayedRequestInNamespace(t *testing.T) {
	l := newLink(t)
	srv, _ := nsServer(t, l, filepath.Join(t.TempDir(), "bss.db"), nil)
	run(t, "ip", "-n", l.cliNS, "addr", "add", "10.78.0.1/24", "dev", l.cliIf)
	run(t, "ip", "-n", l.cliNS, "addr", "add", "10.77.0.2/24", "dev", l.cliIf)
	run(t, "ip", "-n", l.srvNS, "route", "add", "10.78.0.0/24", "via", "10.77.0.2")
	if got := relayedDORA(t, l, srv, "02:78:00:00:00:01", "10.78.0.1", ""); got != "10.78.0.10" {
		t.Errorf("relayed client got %s, want 10.78.0.10 from the relayed subnet", got)
	}
}

// relayedDORA plays a DHCP relay at giaddr in the client namespace (the
// address is added to the client end if missing): it forwards a DISCOVER
// and a REQUEST for mac to the server and returns the address acknowledged.
// want, if set, is asked for (option 50).
func relayedDORA(t *testing.T, l *link, srv *Server, mac, giaddr, want string) string {
	t.Helper()
	exec.Command("ip", "-n", l.cliNS, "addr", "add", giaddr+"/24", "dev", l.cliIf).Run() // already there: fine
	var c *net.UDPConn
	inNS(t, l.cliNS, func() {
		var err error
		if c, err = net.ListenUDP("udp4", &net.UDPAddr{IP: net.ParseIP(giaddr), Port: ServerPort}); err != nil {
			t.Fatal(err)
		}
	})
	defer c.Close()
	server := &net.UDPAddr{IP: net.ParseIP("10.77.0.1"), Port: ServerPort}
	ask := func(typ dhcpv4.MessageType, mods ...dhcpv4.Modifier) *dhcpv4.DHCPv4 {
		m := msg(t, typ, mac, append(mods, dhcpv4.WithGatewayIP(net.ParseIP(giaddr)))...)
		if _, err := c.WriteToUDP(m.ToBytes(), server); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(10 * time.Second)) // bounds a lost reply; times nothing
		buf := make([]byte, 1500)
		n, _, err := c.ReadFromUDP(buf)
		if err != nil {
			t.Fatalf("relay: no reply to %s: %v", typ, err)
		}
		r, err := dhcpv4.FromBytes(buf[:n])
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	var mods []dhcpv4.Modifier
	if want != "" {
		mods = append(mods, withRequested(want))
	}
	offer := ask(dhcpv4.MessageTypeDiscover, mods...)
	ack := ask(dhcpv4.MessageTypeRequest, withRequested(offer.YourIPAddr.String()), withServerID(offer.ServerIdentifier().String()))
	if ack.MessageType() != dhcpv4.MessageTypeAck {
		t.Fatalf("relay: %v", ack)
	}
	return ack.YourIPAddr.String()
}
