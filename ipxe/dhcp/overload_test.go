package dhcp

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"golang.org/x/net/ipv4"

	"github.com/hmsuite/hms/internal/sqldb"
)

// TestOverloadShedsDiscoversFirst is a boot storm whose commits fall
// behind: the server is bound but its writer is not running yet, so every
// lease change waits in memory. Past maxBacklogDiscover waiting changes a
// new DISCOVER is dropped and counted while REQUESTs (leases already
// offered) still queue; past maxBacklog a REQUEST is dropped too. Nothing
// is acknowledged before it is stored. Once the writer runs, every queued
// REQUEST is stored and acknowledged and DISCOVERs are answered again.
// Packets go straight to the read loop's per-packet step, so the test
// decides what is in hand when; no clock is involved.
func TestOverloadShedsDiscoversFirst(t *testing.T) {
	db, err := sqldb.Open(t.Context(), filepath.Join(t.TempDir(), "bss.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	clk := &clock{now: t0}
	cfg := Config{ServerID: netip.MustParseAddr("10.64.0.1"), Subnets: []Subnet{{Prefix: netip.MustParsePrefix("10.64.0.0/19"),
		First: netip.MustParseAddr("10.64.0.10"), Last: netip.MustParseAddr("10.64.31.250"), Lease: time.Hour}}}
	srv, err := Listen(t.Context(), ServerConfig{Handler: cfg, Listen: &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, ReplyToPeer: true,
		Now: clk.Now, Registerer: prometheus.NewRegistry()}, db)
	if err != nil {
		t.Fatal(err)
	}
	// Replies go to a socket nobody reads: only that they are sent counts.
	sink, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	feed := func(m *dhcpv4.DHCPv4) *datagram {
		b := m.ToBytes()
		return srv.packet(&ipv4.Message{Buffers: [][]byte{b}, N: len(b), Addr: sink.LocalAddr()})
	}
	mac := func(i int) string { return fmt.Sprintf("02:0f:%02x:%02x:00:01", i>>8, i&0xff) }
	discover := func(i int) *datagram { return feed(msg(t, dhcpv4.MessageTypeDiscover, mac(i))) }
	offered := make([]string, maxBacklog+1)
	for i := range offered {
		r := discover(i)
		if r == nil || r.t != dhcpv4.MessageTypeOffer {
			t.Fatalf("DISCOVER %d with nothing in hand: %v", i, r)
		}
		o, _ := dhcpv4.FromBytes(r.b)
		offered[i] = o.YourIPAddr.String()
	}
	request := func(i int) *datagram {
		return feed(msg(t, dhcpv4.MessageTypeRequest, mac(i), withRequested(offered[i]), withServerID("10.64.0.1")))
	}
	overload := func() float64 { return testutil.ToFloat64(srv.m.dropped.WithLabelValues(DropOverload)) }
	acks := func() float64 {
		return testutil.ToFloat64(srv.m.replies.WithLabelValues(dhcpv4.MessageTypeAck.String()))
	}

	for i := range maxBacklogDiscover {
		if r := request(i); r != nil {
			t.Fatalf("REQUEST %d answered before its lease was stored", i)
		}
	}
	if r := discover(len(offered)); r != nil || overload() != 1 {
		t.Errorf("DISCOVER with %d changes in hand: reply %v, %v dropped for overload; want dropped", maxBacklogDiscover, r, overload())
	}
	for i := maxBacklogDiscover; i < maxBacklog; i++ {
		request(i)
	}
	if overload() != 1 {
		t.Errorf("REQUESTs below %d in hand dropped: %v", maxBacklog, overload())
	}
	request(maxBacklog)
	if overload() != 2 {
		t.Errorf("REQUEST with %d in hand not dropped (%v dropped)", maxBacklog, overload())
	}
	if acks() != 0 {
		t.Errorf("%v ACKs sent before any commit", acks())
	}

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	}()
	wctx, wcancel := context.WithTimeout(t.Context(), 30*time.Second) // bounds a stuck writer, times nothing
	defer wcancel()
	for {
		relayed := srv.Relayed() // closed after each round that follows a commit
		ls, err := srv.store.Leases(wctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(ls) == maxBacklog && acks() == maxBacklog {
			break
		}
		select {
		case <-relayed:
		case <-wctx.Done():
			t.Fatalf("after the writer ran: %d leases stored, %v ACKs sent; want %d of each", len(ls), acks(), maxBacklog)
		}
	}
	for _, l := range srv.h.Leases() {
		if l.MAC == mac(maxBacklog) && l.State != Offered {
			t.Errorf("the dropped REQUEST's lease is %v, want still only offered", l.State)
		}
	}
	if r := discover(len(offered) + 1); r == nil || r.t != dhcpv4.MessageTypeOffer {
		t.Errorf("DISCOVER after the backlog cleared: %v, want an OFFER", r)
	}
}
