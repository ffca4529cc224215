package dhcp

import (
	"net"
	"path/filepath"
	"testing"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"golang.org/x/net/ipv4"

	"github.com/hmsuite/hms/internal/sqldb"
)

// TestOverloadDropsDiscoversFirst: while commits lag, new DISCOVERs are
// dropped first and, past the larger backlog, REQUESTs too.
func TestOverloadDropsDiscoversFirst(t *testing.T) {
	db, err := sqldb.Open(t.Context(), filepath.Join(t.TempDir(), "bss.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	srv, err := Listen(t.Context(), ServerConfig{Handler: testConfig(), Listen: &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, ReplyToPeer: true}, db)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close() // not run: the backlog stays as set
	in := func(m *dhcpv4.DHCPv4) *datagram {
		b := m.ToBytes()
		return srv.packet(&ipv4.Message{Buffers: [][]byte{b}, N: len(b), Addr: &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 68}})
	}
	discover := msg(t, dhcpv4.MessageTypeDiscover, "02:44:00:00:00:01")
	request := msg(t, dhcpv4.MessageTypeRequest, "02:44:00:00:00:01", withRequested("10.1.0.99")) // NAKed: no change
	overload := func() float64 { return testutil.ToFloat64(srv.m.dropped.WithLabelValues(DropOverload)) }
	srv.pending = make([]pendingChange, maxBacklogDiscover-1)
	if in(discover) == nil {
		t.Fatal("DISCOVER below the backlog limit not answered")
	}
	srv.pending = make([]pendingChange, maxBacklogDiscover)
	if r := in(discover); r != nil || overload() != 1 {
		t.Errorf("DISCOVER at the backlog limit: reply %v, overload drops %v", r, overload())
	}
	if r := in(request); r == nil || r.t != dhcpv4.MessageTypeNak {
		t.Errorf("REQUEST at the DISCOVER limit not handled: %v", r)
	}
	srv.pending = make([]pendingChange, maxBacklog)
	if r := in(request); r != nil || overload() != 2 {
		t.Errorf("REQUEST at the backlog limit: reply %v, overload drops %v", r, overload())
	}
}
