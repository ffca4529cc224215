package dhcp

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/ipxe/lease"
	"github.com/hmsuite/hms/statemgr/hsm"
)

func TestDORAUnknownMAC(t *testing.T) {
	h := newHarness(t, testConfig())
	ack := h.dora("02:aa:00:00:00:01", dhcpv4.WithOption(dhcpv4.OptHostName("fresh")))
	ip := ack.YourIPAddr.String()
	if ip != "10.1.0.10" {
		t.Errorf("yiaddr %s, want the pool's first 10.1.0.10", ip)
	}
	if got := ack.IPAddressLeaseTime(0); got != DefaultUnknownLease {
		t.Errorf("lease %v, want the short %v for an unknown MAC", got, DefaultUnknownLease)
	}
	if r := ack.Router(); len(r) != 1 || !r[0].Equal(net.ParseIP("10.1.0.1")) {
		t.Errorf("router %v", r)
	}
	if d := ack.DNS(); len(d) != 1 || !d[0].Equal(net.ParseIP("10.1.0.2")) {
		t.Errorf("dns %v", d)
	}
	if m := net.IP(ack.SubnetMask()).String(); m != "255.255.255.0" {
		t.Errorf("mask %s", m)
	}
	ev := h.events(1)
	want := lease.Event{Kind: lease.Commit, MACAddress: "02:aa:00:00:00:01", IPAddress: "10.1.0.10", Hostname: "fresh",
		Subnet: "10.1.0.0/24", Expires: t0.Add(DefaultUnknownLease), Time: t0}
	if diff := cmp.Diff(want, ev[0]); diff != "" {
		t.Errorf("event (-want +got):\n%s", diff)
	}
}

func TestReservationsForKnownMACs(t *testing.T) {
	h := newHarness(t, testConfig())
	ack := h.dora("02:00:00:00:00:01")
	if ip := ack.YourIPAddr.String(); ip != "10.1.0.50" {
		t.Errorf("known MAC got %s, want HSM's 10.1.0.50 (outside the pool is fine)", ip)
	}
	if lt := ack.IPAddressLeaseTime(0); lt != time.Hour {
		t.Errorf("known MAC lease %v, want 1h", lt)
	}
	if hn := ack.HostName(); hn != "x3000c0s1b0n0" {
		t.Errorf("hostname %q, want the xname", hn)
	}
	// Known without an HSM address: the pool, with the long lease.
	ack = h.dora("02:00:00:00:00:02")
	if ip := ack.YourIPAddr.String(); ip != "10.1.0.10" || ack.IPAddressLeaseTime(0) != time.Hour {
		t.Errorf("known MAC without address got %s for %v", ip, ack.IPAddressLeaseTime(0))
	}
	ev := h.events(2)
	if !ev[0].Known || !ev[1].Known {
		t.Errorf("events of known MACs not marked Known: %+v", ev)
	}
	// An unknown MAC asking for the reserved address does not get it.
	offer := h.exchange(msg(t, dhcpv4.MessageTypeDiscover, "02:aa:00:00:00:09", withRequested("10.1.0.50")))
	if offer == nil || offer.YourIPAddr.String() == "10.1.0.50" {
		t.Fatalf("offer %v", offer)
	}
}

func TestBootFiles(t *testing.T) {
	cfg := testConfig()
	cfg.Has = func(name string) bool { return name != "snp.efi" }
	h := newHarness(t, cfg)
	pxe := dhcpv4.WithOption(dhcpv4.OptClassIdentifier("PXEClient:Arch:00000:UNDI:002001"))
	for _, tc := range []struct {
		name     string
		mods     []dhcpv4.Modifier
		file     string
		siaddr   string
		class    string
		fileSlot string // BOOTP file field
	}{
		{name: "BIOS", mods: []dhcpv4.Modifier{pxe, withArch(iana.INTEL_X86PC)}, file: "undionly.kpxe", siaddr: "10.1.0.5"},
		{name: "x86-64 UEFI", mods: []dhcpv4.Modifier{pxe, withArch(iana.EFI_X86_64)}, file: "ipxe.efi", siaddr: "10.1.0.5"},
		{name: "EFI BC", mods: []dhcpv4.Modifier{withArch(iana.EFI_BC)}, file: "ipxe.efi", siaddr: "10.1.0.5"},
		{name: "arm64 UEFI without snp.efi", mods: []dhcpv4.Modifier{pxe, withArch(iana.EFI_ARM64)}, siaddr: "0.0.0.0"},
		{name: "iPXE", mods: []dhcpv4.Modifier{withArch(iana.EFI_X86_64), dhcpv4.WithOption(dhcpv4.OptUserClass("iPXE"))},
			file: "http://10.1.0.5:27778/boot/v1/bootscript?mac=${net0/mac}", siaddr: "0.0.0.0"},
		{name: "UEFI HTTP boot", mods: []dhcpv4.Modifier{withArch(iana.EFI_X86_64_HTTP), dhcpv4.WithOption(dhcpv4.OptClassIdentifier("HTTPClient:Arch:00016"))},
			file: "http://10.1.0.5:27778/ipxe/ipxe.efi", siaddr: "0.0.0.0", class: "HTTPClient"},
		{name: "plain client", siaddr: "0.0.0.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ack := h.dora("02:bb:00:00:00:0"+string(rune('1'+len(tc.name)%9)), tc.mods...)
			if got := ack.BootFileNameOption(); got != tc.file {
				t.Errorf("option 67 %q, want %q", got, tc.file)
			}
			if ack.BootFileName != tc.file {
				t.Errorf("file field %q, want %q", ack.BootFileName, tc.file)
			}
			if got := ack.ServerIPAddr.String(); got != tc.siaddr {
				t.Errorf("siaddr %s, want %s", got, tc.siaddr)
			}
			if got := ack.ClassIdentifier(); got != tc.class {
				t.Errorf("option 60 %q, want %q", got, tc.class)
			}
		})
	}
}

func TestRelayedRequestLandsInItsSubnet(t *testing.T) {
	h := newHarness(t, testConfig())
	relay := dhcpv4.WithGatewayIP(net.ParseIP("10.2.0.1"))
	ack := h.dora("02:cc:00:00:00:01", relay, withArch(iana.INTEL_X86PC))
	if ip := ack.YourIPAddr.String(); ip != "10.2.0.100" {
		t.Errorf("relayed client got %s, want 10.2.0.100", ip)
	}
	if gi := ack.GatewayIPAddr.String(); gi != "10.2.0.1" {
		t.Errorf("reply giaddr %s", gi)
	}
	ev := h.events(1)
	if ev[0].Relay != "10.2.0.1" || ev[0].Subnet != "10.2.0.0/24" {
		t.Errorf("event %+v", ev[0])
	}
	// A relay in no subnet of ours: dropped.
	if r := h.exchange(msg(t, dhcpv4.MessageTypeDiscover, "02:cc:00:00:00:02", dhcpv4.WithGatewayIP(net.ParseIP("10.9.0.1")))); r != nil {
		t.Errorf("answered a relay of an unknown subnet: %v", r)
	}
}

func TestDestination(t *testing.T) {
	ack, _ := dhcpv4.New(dhcpv4.WithMessageType(dhcpv4.MessageTypeAck))
	nak, _ := dhcpv4.New(dhcpv4.WithMessageType(dhcpv4.MessageTypeNak))
	for _, tc := range []struct {
		name  string
		req   dhcpv4.Modifier
		reply *dhcpv4.DHCPv4
		want  string
	}{
		{name: "relayed", req: dhcpv4.WithGatewayIP(net.ParseIP("10.2.0.1")), reply: ack, want: "10.2.0.1:67"},
		{name: "fresh client", req: dhcpv4.WithClientIP(net.IPv4zero), reply: ack, want: "255.255.255.255:68"},
		{name: "renewing client", req: dhcpv4.WithClientIP(net.ParseIP("10.1.0.10")), reply: ack, want: "10.1.0.10:68"},
		{name: "NAK to a renewing client", req: dhcpv4.WithClientIP(net.ParseIP("10.1.0.10")), reply: nak, want: "255.255.255.255:68"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := dhcpv4.New(tc.req)
			if got := Destination(req, tc.reply, 67, 68).String(); got != tc.want {
				t.Errorf("destination %s, want %s", got, tc.want)
			}
		})
	}
}

func TestRestartKeepsLeases(t *testing.T) { pg.EachDB(t, testRestartKeepsLeases) }

func testRestartKeepsLeases(t *testing.T, db testpeer.DB) {
	h := newHarnessOn(t, db(t), testConfig(), nil)
	first := h.dora("02:dd:00:00:00:01").YourIPAddr.String()
	h.restart()
	// Another client asking for that address gets another one.
	ack := h.dora("02:dd:00:00:00:02", withRequested(first))
	if got := ack.YourIPAddr.String(); got == first {
		t.Fatalf("restarted server handed out the leased %s again", first)
	}
	// Its owner renews it.
	renew := h.exchange(msg(t, dhcpv4.MessageTypeRequest, "02:dd:00:00:00:01", dhcpv4.WithClientIP(net.ParseIP(first))))
	if renew == nil || renew.MessageType() != dhcpv4.MessageTypeAck || renew.YourIPAddr.String() != first {
		t.Fatalf("renewal after restart: %v", renew)
	}
}

// TestRenewalPublishesNothing: renewals (REQUESTs with ciaddr) of a
// bound lease are acknowledged but publish no lease event (nothing changed
// for reds); the same device starting over (DISCOVER, REQUEST without
// ciaddr) is published again, and the release after it.
func TestRenewalPublishesNothing(t *testing.T) {
	h := newHarness(t, testConfig())
	const mac = "02:dc:00:00:00:01"
	ip := h.dora(mac).YourIPAddr.String()
	for range 3 {
		renew := h.exchange(msg(t, dhcpv4.MessageTypeRequest, mac, dhcpv4.WithClientIP(net.ParseIP(ip))))
		if renew == nil || renew.MessageType() != dhcpv4.MessageTypeAck || renew.YourIPAddr.String() != ip {
			t.Fatalf("renewal: %v", renew)
		}
	}
	// The device starts over (a BMC put back, a node rebooted) while its
	// lease still stands: DISCOVER and REQUEST without ciaddr are news.
	if again := h.dora(mac).YourIPAddr.String(); again != ip {
		t.Fatalf("started over with %s, want its lease %s", again, ip)
	}
	h.exchange(msg(t, dhcpv4.MessageTypeRelease, mac, dhcpv4.WithClientIP(net.ParseIP(ip))))
	var kinds []lease.Kind
	for _, e := range h.events(3) {
		kinds = append(kinds, e.Kind)
	}
	if diff := cmp.Diff([]lease.Kind{lease.Commit, lease.Commit, lease.Release}, kinds); diff != "" {
		t.Errorf("event kinds (-want +got):\n%s", diff)
	}
}

func TestReleaseDeclineInform(t *testing.T) {
	h := newHarness(t, testConfig())
	ip := h.dora("02:ee:00:00:00:01").YourIPAddr.String()
	if r := h.exchange(msg(t, dhcpv4.MessageTypeRelease, "02:ee:00:00:00:01", dhcpv4.WithClientIP(net.ParseIP(ip)))); r != nil {
		t.Errorf("RELEASE answered: %v", r)
	}
	ip2 := h.dora("02:ee:00:00:00:02", withRequested(ip)).YourIPAddr.String()
	if ip2 != ip {
		t.Errorf("released %s not handed out again (got %s)", ip, ip2)
	}
	// A DECLINE keeps the address out of the pool.
	h.exchange(msg(t, dhcpv4.MessageTypeDecline, "02:ee:00:00:00:02", withRequested(ip2)))
	ip3 := h.dora("02:ee:00:00:00:03").YourIPAddr.String()
	if ip3 == ip2 {
		t.Errorf("declined %s handed out again", ip2)
	}
	inform := h.exchange(msg(t, dhcpv4.MessageTypeInform, "02:ee:00:00:00:03", dhcpv4.WithClientIP(net.ParseIP(ip3))))
	if inform == nil || inform.MessageType() != dhcpv4.MessageTypeAck || !inform.YourIPAddr.Equal(net.IPv4zero) ||
		inform.Options.Has(dhcpv4.OptionIPAddressLeaseTime) || len(inform.Router()) != 1 {
		t.Errorf("INFORM reply %v", inform)
	}
	var kinds []lease.Kind
	for _, e := range h.events(5) {
		kinds = append(kinds, e.Kind)
	}
	if diff := cmp.Diff([]lease.Kind{lease.Commit, lease.Release, lease.Commit, lease.Decline, lease.Commit}, kinds); diff != "" {
		t.Errorf("event kinds (-want +got):\n%s", diff)
	}
}

func TestExhaustedPoolAndNAK(t *testing.T) {
	h := newHarness(t, testConfig())
	relay := dhcpv4.WithGatewayIP(net.ParseIP("10.2.0.1")) // a pool of two
	h.dora("02:ff:00:00:00:01", relay)
	h.dora("02:ff:00:00:00:02", relay)
	if r := h.exchange(msg(t, dhcpv4.MessageTypeDiscover, "02:ff:00:00:00:03", relay)); r != nil {
		t.Errorf("offer from an exhausted pool: %v", r)
	}
	// Asking for a leased address, or one outside the subnet: NAK.
	for _, want := range []string{"10.2.0.100", "10.1.0.10"} {
		r := h.exchange(msg(t, dhcpv4.MessageTypeRequest, "02:ff:00:00:00:03", relay, withRequested(want)))
		if r == nil || r.MessageType() != dhcpv4.MessageTypeNak {
			t.Errorf("REQUEST for %s: %v, want NAK", want, r)
		}
	}
	if n := testutil.ToFloat64(h.srv.m.dropped.WithLabelValues(DropExhausted)); n != 1 {
		t.Errorf("exhausted drops counted %v", n)
	}
}

func TestMalformedAndUnknownDropped(t *testing.T) {
	h := newHarness(t, testConfig())
	offer := msg(t, dhcpv4.MessageTypeOffer, "02:11:00:00:00:01")
	for name, b := range map[string][]byte{
		"garbage":                  []byte("not dhcp at all"),
		"truncated":                msg(t, dhcpv4.MessageTypeDiscover, "02:11:00:00:00:01").ToBytes()[:200],
		"option runs past the end": append(msg(t, dhcpv4.MessageTypeDiscover, "02:11:00:00:00:01").ToBytes()[:240], 12, 200, 'a'),
		"an OFFER":                 offer.ToBytes(),
	} {
		if r := h.exchangeRaw(b); r != nil {
			t.Errorf("%s answered: %v", name, r)
		}
	}
	if n := testutil.ToFloat64(h.srv.m.dropped.WithLabelValues(DropMalformed)); n < 2 {
		t.Errorf("malformed drops counted %v", n)
	}
	if n := testutil.ToFloat64(h.srv.m.dropped.WithLabelValues(DropUnknownType)); n != 1 {
		t.Errorf("unknown type drops counted %v", n)
	}
	h.dora("02:11:00:00:00:02") // still serving
}

func TestExpiryPublishesExpire(t *testing.T) {
	h := newHarness(t, testConfig())
	ip := h.dora("02:22:00:00:00:01").YourIPAddr.String()
	h.events(1)
	h.clk.Add(DefaultUnknownLease)
	if err := h.srv.Expire(); err != nil {
		t.Fatal(err)
	}
	e := h.events(1)[0]
	if e.Kind != lease.Expire || e.IPAddress != ip || e.MACAddress != "02:22:00:00:00:01" {
		t.Errorf("event %+v", e)
	}
	if len(h.srv.Handler().Leases()) != 0 {
		t.Errorf("leases left: %+v", h.srv.Handler().Leases())
	}
}

// TestExpireAfterStopDoesNotHang: an expiry queued once the writer has
// stopped (the expirer's tick racing shutdown) gets an error at once; it
// used to wait forever for the writer, and Run with it (found by review).
func TestExpireAfterStopDoesNotHang(t *testing.T) {
	h := newHarness(t, testConfig())
	h.dora("02:22:00:00:00:03")
	h.stop()
	h.clk.Add(DefaultUnknownLease)
	done := make(chan error, 1)
	go func() { done <- h.srv.Expire() }()
	select {
	case err := <-done:
		if !errors.Is(err, errStopped) {
			t.Fatalf("Expire after stop: %v, want errStopped", err)
		}
	case <-time.After(10 * time.Second): // bounds a hang; asserts no timing
		t.Fatal("Expire after stop still waiting for the stopped writer")
	}
}

func TestEventsSurviveBusOutage(t *testing.T) { pg.EachDB(t, testEventsSurviveBusOutage) }

func testEventsSurviveBusOutage(t *testing.T, db testpeer.DB) {
	h := newHarnessOn(t, db(t), testConfig(), nil)
	h.pub.setDown(true)
	ack := h.dora("02:33:00:00:00:01") // answered while the bus is down
	h.restart()                        // and the event is still in the outbox
	h.pub.setDown(false)
	e := h.events(1)[0]
	if e.MACAddress != "02:33:00:00:00:01" || e.IPAddress != ack.YourIPAddr.String() {
		t.Errorf("event %+v", e)
	}
}

func TestProxyMode(t *testing.T) {
	cfg := testConfig()
	cfg.Proxy, cfg.Subnets = true, nil
	h := newHarness(t, cfg)
	offer := h.exchange(msg(t, dhcpv4.MessageTypeDiscover, "02:44:00:00:00:01",
		dhcpv4.WithOption(dhcpv4.OptClassIdentifier("PXEClient:Arch:00007:UNDI:003016")), withArch(iana.EFI_X86_64)))
	if offer == nil || !offer.YourIPAddr.Equal(net.IPv4zero) || offer.BootFileNameOption() != "ipxe.efi" ||
		offer.ClassIdentifier() != "PXEClient" {
		t.Fatalf("proxy offer %v", offer)
	}
	// iPXE takes a proxy offer as is only with a boot file and siaddr;
	// else it asks on port 4011 and ends with nothing to boot.
	ipxe := h.exchange(msg(t, dhcpv4.MessageTypeDiscover, "02:44:00:00:00:03", withArch(iana.EFI_X86_64),
		dhcpv4.WithOption(dhcpv4.OptClassIdentifier("PXEClient:Arch:00007:UNDI:003010")), dhcpv4.WithOption(dhcpv4.OptUserClass("iPXE"))))
	if ipxe == nil || ipxe.BootFileNameOption() != "http://10.1.0.5:27778/boot/v1/bootscript?mac=${net0/mac}" ||
		ipxe.ServerIPAddr.String() != "10.1.0.5" || ipxe.ClassIdentifier() != "PXEClient" {
		t.Errorf("iPXE's proxy offer %v, want the script URL, siaddr 10.1.0.5 and option 60 PXEClient", ipxe)
	}
	// The address server's REQUEST, on port 67 and naming our server
	// identifier (the address server shares our address), is not ours.
	if r := h.exchange(msg(t, dhcpv4.MessageTypeRequest, "02:44:00:00:00:01", withArch(iana.EFI_X86_64), withServerID("10.1.0.1"),
		withRequested("10.1.0.77"), dhcpv4.WithOption(dhcpv4.OptClassIdentifier("PXEClient:Arch:00007:UNDI:003016")))); r != nil {
		t.Errorf("proxy answered a REQUEST on port 67: %v", r)
	}
	if r := h.exchange(msg(t, dhcpv4.MessageTypeDiscover, "02:44:00:00:00:02")); r != nil {
		t.Errorf("proxy answered a client that does not boot: %v", r)
	}
	if len(h.srv.Handler().Leases()) != 0 {
		t.Error("proxy kept a lease")
	}
}

// TestProxyBootServer: a proxy-mode server answers PXE boot server
// requests on its second port (4011), as EDK2 firmware and iPXE ask after a
// ProxyDHCP offer: a REQUEST gets the ACK with the boot file and option 60,
// the asked boot item echoed; anything else there is dropped.
func TestProxyBootServer(t *testing.T) {
	cfg := testConfig()
	cfg.Proxy, cfg.Subnets = true, nil
	h := newHarness(t, cfg)
	bs := h.srv.BootServerAddr()
	if bs == nil {
		t.Fatal("proxy server bound no boot server port")
	}
	pxe := []dhcpv4.Modifier{dhcpv4.WithOption(dhcpv4.OptClassIdentifier("PXEClient:Arch:00007:UNDI:003016")), withArch(iana.EFI_X86_64),
		dhcpv4.WithOption(dhcpv4.OptGeneric(dhcpv4.OptionVendorSpecificInformation, []byte{71, 4, 0x80, 0x00, 0x00, 0x00, 255}))}
	req := msg(t, dhcpv4.MessageTypeRequest, "02:45:00:00:00:01", append(pxe, dhcpv4.WithClientIP(net.IPv4(127, 0, 0, 1)))...)
	ack := h.exchangeWith(bs, req.ToBytes())
	if ack == nil {
		t.Fatal("no answer on the boot server port")
	}
	if ack.MessageType() != dhcpv4.MessageTypeAck || ack.BootFileNameOption() != "ipxe.efi" || ack.ClassIdentifier() != "PXEClient" ||
		ack.ServerIPAddr.String() != "10.1.0.5" || !ack.YourIPAddr.Equal(net.IPv4zero) {
		t.Errorf("boot server reply %v", ack)
	}
	if got := ack.Options.Get(dhcpv4.OptionVendorSpecificInformation); string(got) != string([]byte{71, 4, 0x80, 0, 0, 0, 255}) {
		t.Errorf("option 43 % x, want the boot item echoed", got)
	}
	ipxe := msg(t, dhcpv4.MessageTypeRequest, "02:45:00:00:00:02", withArch(iana.EFI_X86_64), dhcpv4.WithOption(dhcpv4.OptUserClass("iPXE")))
	if r := h.exchangeWith(bs, ipxe.ToBytes()); r == nil || r.BootFileNameOption() != "http://10.1.0.5:27778/boot/v1/bootscript?mac=${net0/mac}" ||
		r.ServerIPAddr.String() != "10.1.0.5" {
		t.Errorf("iPXE's ProxyDHCPREQUEST got %v", r)
	}
	for name, m := range map[string]*dhcpv4.DHCPv4{
		"DISCOVER":       msg(t, dhcpv4.MessageTypeDiscover, "02:45:00:00:00:03", pxe...),
		"not a PXE boot": msg(t, dhcpv4.MessageTypeRequest, "02:45:00:00:00:04"),
	} {
		if r := h.exchangeWith(bs, m.ToBytes()); r != nil {
			t.Errorf("%s on the boot server port answered: %v", name, r)
		}
	}
}

func TestPoolSkipsReservedAndWraps(t *testing.T) {
	s := &Subnet{Prefix: netip.MustParsePrefix("10.0.0.0/29"), First: netip.MustParseAddr("10.0.0.1"), Last: netip.MustParseAddr("10.0.0.3")}
	tb := newTable()
	reserved := netip.MustParseAddr("10.0.0.2")
	ok := func(a netip.Addr) bool { return a != reserved && tb.free(a, "m", t0) }
	var got []string
	for range 3 {
		a := tb.scan(s, ok)
		got = append(got, a.String())
		if a.IsValid() {
			tb.put(&Lease{IP: a, MAC: a.String(), State: Bound, Expires: t0.Add(time.Hour)})
		}
	}
	if diff := cmp.Diff([]string{"10.0.0.1", "10.0.0.3", "invalid IP"}, got); diff != "" {
		t.Errorf("scan (-want +got):\n%s", diff)
	}
}

// TestEventsNotBehindHSMWrites: lease events reach the bus while HSM has
// not answered the writes of the unknown MACs (in a boot storm HSM takes
// thousands, and events queued behind them reached discovery late).
func TestEventsNotBehindHSMWrites(t *testing.T) {
	stuck := &stuckHSM{gate: make(chan struct{}), called: make(chan struct{})}
	h := newHarnessHSM(t, testConfig(), stuck)
	defer close(stuck.gate) // before the harness stops: its writes end
	h.dora("02:44:00:00:00:01")
	select { // the HSM write of the first MAC is under way
	case <-stuck.called:
	case <-time.After(10 * time.Second): // a guard, not a timing
		t.Fatal("the unknown MAC was never written to HSM")
	}
	h.dora("02:44:00:00:00:02")
	got := map[string]bool{}
	for _, e := range h.events(2) {
		got[e.MACAddress] = true
	}
	if !got["02:44:00:00:00:01"] || !got["02:44:00:00:00:02"] {
		t.Errorf("events for %v, want both MACs while HSM does not answer", got)
	}
}

// stuckHSM does not answer until gate is closed; called is closed at the
// first write.
type stuckHSM struct {
	gate   chan struct{}
	once   sync.Once
	called chan struct{}
}

func (s *stuckHSM) CreateEthernetInterface(ctx context.Context, _ hsm.EthernetInterface) error {
	s.once.Do(func() { close(s.called) })
	select {
	case <-s.gate:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
