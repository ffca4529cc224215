package dhcp

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"

	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/sqldb"
	"github.com/hmsuite/hms/ipxe/lease"
)

// BenchmarkDORA runs full DISCOVER-OFFER-REQUEST-ACK exchanges over
// loopback UDP against a server with SQLite-persisted leases and the lease
// events published (in-process bus), 32 clients at a time; each iteration
// is one lease. scripts/bench.d/dhcp.sh measures the same with perfdhcp.
func BenchmarkDORA(b *testing.B) {
	db, err := sqldb.Open(b.Context(), filepath.Join(b.TempDir(), "bss.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	pub := bus.NewUnread()
	defer pub.Close()
	cfg := Config{ServerID: netip.MustParseAddr("10.1.0.1"), Subnets: []Subnet{{Prefix: netip.MustParsePrefix("10.0.0.0/8"),
		First: netip.MustParseAddr("10.0.0.10"), Last: netip.MustParseAddr("10.255.255.250")}}}
	srv, err := Listen(b.Context(), ServerConfig{Handler: cfg, Listen: &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, ReplyToPeer: true, Publisher: pub}, db)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(b.Context())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	defer func() { cancel(); <-done }()
	const clients = 32
	var wg sync.WaitGroup
	b.ResetTimer()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := net.DialUDP("udp4", nil, srv.Addr())
			if err != nil {
				b.Error(err)
				return
			}
			defer conn.Close()
			buf := make([]byte, 1500)
			x := func(m *dhcpv4.DHCPv4) *dhcpv4.DHCPv4 {
				conn.Write(m.ToBytes())
				conn.SetReadDeadline(time.Now().Add(5 * time.Second))
				n, err := conn.Read(buf)
				if err != nil {
					b.Error(err)
					return nil
				}
				r, _ := dhcpv4.FromBytes(buf[:n])
				return r
			}
			for i := c; i < b.N; i += clients {
				mac := make(net.HardwareAddr, 6)
				mac[0] = 2
				binary.BigEndian.PutUint32(mac[2:], uint32(i))
				d, _ := dhcpv4.New(dhcpv4.WithMessageType(dhcpv4.MessageTypeDiscover), dhcpv4.WithHwAddr(mac))
				offer := x(d)
				if offer == nil {
					return
				}
				r, _ := dhcpv4.New(dhcpv4.WithMessageType(dhcpv4.MessageTypeRequest), dhcpv4.WithHwAddr(mac),
					dhcpv4.WithTransactionID(d.TransactionID), withRequested(offer.YourIPAddr.String()), withServerID("10.1.0.1"))
				if ack := x(r); ack == nil || ack.MessageType() != dhcpv4.MessageTypeAck {
					b.Error("no ack")
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "leases/s")
}

// BenchmarkPacketPath is the server's per-packet work of one DORA without
// sockets or storage: parse the DISCOVER, decide, encode the OFFER into a
// reused buffer, and the same for the REQUEST and its ACK (a relayed
// client, as perfdhcp sends). The packets are built once and only their
// MAC and requested address change.
func BenchmarkPacketPath(b *testing.B) {
	h := NewHandler(benchConfig(), nil, nil)
	disc, reqb, at50 := benchPackets(b)
	var r request
	out := make([]byte, 0, 1500)
	b.ReportAllocs()
	for i := range b.N {
		binary.BigEndian.PutUint32(disc[30:34], uint32(i))
		binary.BigEndian.PutUint32(reqb[30:34], uint32(i))
		if err := r.parse(disc); err != nil {
			b.Fatal(err)
		}
		o := h.handle(&r)
		if !o.reply {
			b.Fatal(o.drop)
		}
		out, _ = h.appendAnswer(out[:0], &o.ans)
		ip := o.ans.yiaddr.As4()
		copy(reqb[at50:], ip[:])
		if err := r.parse(reqb); err != nil {
			b.Fatal(err)
		}
		if o = h.handle(&r); !o.reply || o.ans.t != dhcpv4.MessageTypeAck {
			b.Fatal("no ACK", o.drop)
		}
		out, _ = h.appendAnswer(out[:0], &o.ans)
	}
}

// BenchmarkPacketPathMessage is BenchmarkPacketPath through insomniacslk's
// codec (FromBytes, Handle, ToBytes), as the server did before its own
// (the comparison for docs/benchmarks/dhcp.md).
func BenchmarkPacketPathMessage(b *testing.B) {
	h := NewHandler(benchConfig(), nil, nil)
	disc, reqb, at50 := benchPackets(b)
	b.ReportAllocs()
	for i := range b.N {
		binary.BigEndian.PutUint32(disc[30:34], uint32(i))
		binary.BigEndian.PutUint32(reqb[30:34], uint32(i))
		m, err := dhcpv4.FromBytes(disc)
		if err != nil {
			b.Fatal(err)
		}
		offer := h.Handle(m).Reply
		_ = offer.ToBytes()
		copy(reqb[at50:], offer.YourIPAddr.To4())
		if m, err = dhcpv4.FromBytes(reqb); err != nil {
			b.Fatal(err)
		}
		_ = h.Handle(m).Reply.ToBytes()
	}
}

func benchConfig() Config {
	return Config{ServerID: netip.MustParseAddr("10.1.0.1"), Files: DefaultBootFiles(), BootURL: "http://10.1.0.1:27778",
		Subnets: []Subnet{{Prefix: netip.MustParsePrefix("10.0.0.0/8"), Router: netip.MustParseAddr("10.0.0.1"),
			First: netip.MustParseAddr("10.0.0.10"), Last: netip.MustParseAddr("10.255.255.250"), Relayed: true}}}
}

// benchPackets are a relayed DISCOVER and REQUEST as perfdhcp sends them,
// and the offset of the REQUEST's option 50 value.
func benchPackets(b *testing.B) (disc, req []byte, at50 int) {
	relay := dhcpv4.WithGatewayIP(net.IPv4(10, 0, 0, 1))
	mac := net.HardwareAddr{2, 0, 0, 0, 0, 0}
	prl := dhcpv4.WithRequestedOptions(dhcpv4.OptionSubnetMask, dhcpv4.OptionRouter, dhcpv4.OptionDomainNameServer)
	d, _ := dhcpv4.New(dhcpv4.WithMessageType(dhcpv4.MessageTypeDiscover), dhcpv4.WithHwAddr(mac), relay, prl)
	r, _ := dhcpv4.New(dhcpv4.WithMessageType(dhcpv4.MessageTypeRequest), dhcpv4.WithHwAddr(mac), relay, prl,
		withRequested("10.0.0.10"), withServerID("10.1.0.1"))
	req = r.ToBytes()
	at50 = bytes.Index(req[headerLen:], []byte{50, 4, 10, 0, 0, 10}) + headerLen + 2
	if at50 < headerLen+2 {
		b.Fatal("no option 50")
	}
	return d.ToBytes(), req, at50
}

// BenchmarkApply is the group commit of a storm: batches of 16, 64 and 256 new
// leases with their events, each one transaction (synchronous=FULL); one
// iteration is one lease.
func BenchmarkApply(b *testing.B) {
	for _, batch := range []int{16, 64, 256} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) { benchApply(b, batch) })
	}
}

func benchApply(b *testing.B, batch int) {
	db, err := sqldb.Open(b.Context(), filepath.Join(b.TempDir(), "bss.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	s, err := OpenStore(b.Context(), db)
	if err != nil {
		b.Fatal(err)
	}
	sub := netip.MustParsePrefix("10.0.0.0/8")
	ip := netip.MustParseAddr("10.0.0.10")
	now := time.Now()
	b.ReportAllocs()
	for i := 0; i < b.N; i += batch {
		cs := make([]*Change, 0, batch)
		for range min(batch, b.N-i) {
			ip = ip.Next()
			mac := net.HardwareAddr{2, 0, ip.As4()[0], ip.As4()[1], ip.As4()[2], ip.As4()[3]}.String()
			l := &Lease{IP: ip, MAC: mac, Subnet: sub, State: Bound, Expires: now.Add(time.Hour)}
			cs = append(cs, &Change{Put: l, Event: &lease.Event{Kind: lease.Commit, MACAddress: mac, IPAddress: ip.String(),
				Subnet: sub.String(), Relay: "10.0.0.1", Expires: l.Expires, Time: now}})
		}
		if _, err := s.Apply(b.Context(), cs, 0); err != nil {
			b.Fatal(err)
		}
	}
}
