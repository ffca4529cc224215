package ipxe

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"

	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/ipxe/dhcp"
	"github.com/hmsuite/hms/ipxe/lease"
	"github.com/hmsuite/hms/ipxe/tftp"
)

// TestBootChainWithHSM runs bss with its DHCP and TFTP servers on loopback
// beside a real HSM: a MAC HSM knows gets its HSM address, an unknown one a
// pool address, an EthernetInterface in HSM with no ComponentID and a lease
// event on the bus; the boot file is served over HTTP as well.
func TestBootChainWithHSM(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "ipxe.efi"), []byte("not really an EFI binary"), 0o644); err != nil {
		t.Fatal(err)
	}
	pub := bus.NewMemory()
	defer pub.Close()
	sub := dhcp.Subnet{Prefix: netip.MustParsePrefix("10.0.0.0/24"), First: netip.MustParseAddr("10.0.0.100"),
		Last: netip.MustParseAddr("10.0.0.200")}
	hc, bss := withHSM(t, func(c *DaemonConfig) {
		c.Publisher = pub
		c.TFTP = &tftp.Config{Listen: "127.0.0.1:0", Root: root}
		c.DHCP = &dhcp.ServerConfig{Listen: &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, ReplyToPeer: true,
			Handler: dhcp.Config{Subnets: []dhcp.Subnet{sub}, ServerID: netip.MustParseAddr("10.0.0.1")}}
	})
	ask := func(typ dhcpv4.MessageType, mac string, mods ...dhcpv4.Modifier) *dhcpv4.DHCPv4 {
		t.Helper()
		return askDHCP(t, bss.DHCP().Addr(), typ, mac, append([]dhcpv4.Modifier{withArch(iana.EFI_X86_64)}, mods...)...)
	}
	// aa:bb:cc:00:00:01 is x3000c0s1b0n0 with 10.0.0.1 in HSM (withHSM).
	known := ask(dhcpv4.MessageTypeDiscover, "aa:bb:cc:00:00:01")
	if known.YourIPAddr.String() != "10.0.0.1" || known.HostName() != "x3000c0s1b0n0" {
		t.Errorf("known MAC offered %s (%q)", known.YourIPAddr, known.HostName())
	}
	if f := known.BootFileNameOption(); f != "ipxe.efi" {
		t.Errorf("boot file %q", f)
	}
	offer := ask(dhcpv4.MessageTypeDiscover, "02:00:00:00:99:01")
	ack := ask(dhcpv4.MessageTypeRequest, "02:00:00:00:99:01",
		dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(offer.YourIPAddr)), dhcpv4.WithOption(dhcpv4.OptServerIdentifier(offer.ServerIdentifier())))
	if ack.MessageType() != dhcpv4.MessageTypeAck || ack.YourIPAddr.String() != "10.0.0.100" {
		t.Fatalf("unknown MAC: %v", ack)
	}
	ev := firstEvent(t, pub)
	if ev.MACAddress != "02:00:00:00:99:01" || ev.Known || ev.Arch != "x86_64" {
		t.Errorf("lease event %+v", ev)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for {
		relayed := bss.DHCP().Relayed()
		ei, err := hc.EthernetInterface(ctx, "020000009901")
		if err == nil {
			if ei.ComponentID != "" || len(ei.IPAddresses) != 1 || ei.IPAddresses[0].IPAddress != "10.0.0.100" {
				t.Errorf("HSM interface %+v", ei)
			}
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("unknown MAC never written to HSM: %v", err)
		case <-relayed:
		}
	}
	resp, err := http.Get(bss.URL() + "/ipxe/ipxe.efi")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "not really an EFI binary" {
		t.Errorf("GET /ipxe/ipxe.efi: %d %q", resp.StatusCode, b)
	}
}

// askDHCP sends one message from mac to the server at addr and returns its
// answer.
func askDHCP(t *testing.T, addr *net.UDPAddr, typ dhcpv4.MessageType, mac string, mods ...dhcpv4.Modifier) *dhcpv4.DHCPv4 {
	t.Helper()
	hw, _ := net.ParseMAC(mac)
	m, err := dhcpv4.New(append([]dhcpv4.Modifier{dhcpv4.WithMessageType(typ), dhcpv4.WithHwAddr(hw)}, mods...)...)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.DialUDP("udp4", nil, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write(m.ToBytes())
	c.SetReadDeadline(time.Now().Add(5 * time.Second)) // bounds a lost reply, times nothing
	buf := make([]byte, 1500)
	n, err := c.Read(buf)
	if err != nil {
		t.Fatalf("%s from %s: %v", typ, mac, err)
	}
	r, err := dhcpv4.FromBytes(buf[:n])
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// dora leases an address to mac from the server at addr.
func dora(t *testing.T, addr *net.UDPAddr, mac string) *dhcpv4.DHCPv4 {
	t.Helper()
	offer := askDHCP(t, addr, dhcpv4.MessageTypeDiscover, mac)
	ack := askDHCP(t, addr, dhcpv4.MessageTypeRequest, mac, dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(offer.YourIPAddr)),
		dhcpv4.WithOption(dhcpv4.OptServerIdentifier(offer.ServerIdentifier())))
	if ack.MessageType() != dhcpv4.MessageTypeAck {
		t.Fatalf("%s: %v", mac, ack)
	}
	return ack
}

func withArch(a iana.Arch) dhcpv4.Modifier { return dhcpv4.WithOption(dhcpv4.OptClientArch(a)) }

func firstEvent(t *testing.T, b *bus.Memory) lease.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var ev lease.Event
	var got bool
	b.Consume(ctx, lease.Topic, "test", func(_ context.Context, msgs []bus.Message) error {
		e, err := lease.Decode(msgs[0].Value)
		if err != nil {
			t.Error(err)
		}
		ev, got = e, true
		cancel()
		return nil
	})
	if !got {
		t.Fatal("no lease event")
	}
	return ev
}
