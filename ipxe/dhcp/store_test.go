package dhcp

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"
	"sort"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/insomniacslk/dhcp/dhcpv4"

	"github.com/hmsuite/hms/internal/bus"
	"github.com/hmsuite/hms/internal/sqldb"
	"github.com/hmsuite/hms/internal/testpeer"
	"github.com/hmsuite/hms/ipxe/lease"
)

// TestConcurrentClientsGetDistinctDurableLeases: many clients at once
// (so the writer group-commits many leases per transaction) each get an
// address of their own, and every ACKed lease is in the database when the
// server stops: a restarted server has them all and hands none out again.
func TestConcurrentClientsGetDistinctDurableLeases(t *testing.T) {
	pg.EachDB(t, testConcurrentClientsGetDistinctDurableLeases)
}

func testConcurrentClientsGetDistinctDurableLeases(t *testing.T, db testpeer.DB) {
	cfg := testConfig()
	cfg.Subnets[0] = Subnet{Prefix: netip.MustParsePrefix("10.1.0.0/20"), First: netip.MustParseAddr("10.1.0.10"),
		Last: netip.MustParseAddr("10.1.15.250"), Lease: time.Hour}
	h := newHarnessOn(t, db(t), cfg, nil)
	const clients, each = 32, 16
	acked := map[string]string{} // mac -> ip
	var mu sync.Mutex
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := range each {
				mac := fmt.Sprintf("02:c0:00:00:%02x:%02x", c, i)
				ip, err := h.doraErr(mac)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				acked[mac] = ip
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(acked) != clients*each {
		t.Fatalf("%d of %d clients got a lease", len(acked), clients*each)
	}
	owner := map[string]string{}
	for mac, ip := range acked {
		if other, dup := owner[ip]; dup {
			t.Errorf("%s handed to both %s and %s", ip, other, mac)
		}
		owner[ip] = mac
	}
	h.restart()
	got := map[string]string{}
	for _, l := range h.srv.Handler().Leases() {
		if l.State == Bound {
			got[l.MAC] = l.IP.String()
		}
	}
	if diff := cmp.Diff(acked, got); diff != "" {
		t.Errorf("leases after restart differ from the ACKs (-acked +stored):\n%s", diff)
	}
	ip, err := h.doraErr("02:c0:00:00:ff:ff")
	if err != nil {
		t.Fatal(err)
	}
	if mac, taken := owner[ip]; taken {
		t.Errorf("after restart %s handed out again (held by %s)", ip, mac)
	}
	// Events are at least once: those the outbox had not marked published
	// when the server restarted are published again. Every acknowledged
	// lease must have its event; repeats of one are allowed.
	want := map[string]bool{"02:c0:00:00:ff:ff": true}
	for mac := range acked {
		want[mac] = true
	}
	if missing := h.missingEvents(want); len(missing) > 0 {
		t.Errorf("%d of %d leases have no event: %v", len(missing), len(want), missing)
	}
}

// missingEvents reads lease events until every MAC of want has one (or 10 s
// passed) and returns the MACs that had none.
func (h *harness) missingEvents(want map[string]bool) []string {
	ctx, cancel := context.WithTimeout(h.t.Context(), 10*time.Second)
	defer cancel()
	left := maps.Clone(want)
	err := h.pub.Memory.Consume(ctx, lease.Topic, "test-missing-"+h.t.Name(), func(_ context.Context, msgs []bus.Message) error {
		for _, m := range msgs {
			delete(left, string(m.Key))
		}
		if len(left) == 0 {
			cancel()
		}
		return nil
	})
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		h.t.Fatal(err)
	}
	return slices.Sorted(maps.Keys(left))
}

// doraErr is dora for goroutines other than the test's: errors, no Fatal.
func (h *harness) doraErr(mac string) (string, error) {
	x := func(m *dhcpv4.DHCPv4) (*dhcpv4.DHCPv4, error) {
		c, err := net.DialUDP("udp4", nil, h.srv.Addr())
		if err != nil {
			return nil, err
		}
		defer c.Close()
		if _, err := c.Write(m.ToBytes()); err != nil {
			return nil, err
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Second)) // bounds a lost reply; asserts nothing
		buf := make([]byte, 1500)
		n, err := c.Read(buf)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", mac, err)
		}
		return dhcpv4.FromBytes(buf[:n])
	}
	d, err := dhcpv4.New(dhcpv4.WithMessageType(dhcpv4.MessageTypeDiscover), dhcpv4.WithHwAddr(hw(mac)))
	if err != nil {
		return "", err
	}
	offer, err := x(d)
	if err != nil {
		return "", err
	}
	r, err := dhcpv4.New(dhcpv4.WithMessageType(dhcpv4.MessageTypeRequest), dhcpv4.WithHwAddr(hw(mac)),
		withRequested(offer.YourIPAddr.String()), withServerID(offer.ServerIdentifier().String()))
	if err != nil {
		return "", err
	}
	ack, err := x(r)
	if err != nil {
		return "", err
	}
	if ack.MessageType() != dhcpv4.MessageTypeAck {
		return "", fmt.Errorf("%s: %s, want ACK", mac, ack.MessageType())
	}
	return ack.YourIPAddr.String(), nil
}

// pg is the package's PostgreSQL server, started by the first test that
// asks for a database on it (pg.EachDB).
var pg = testpeer.NewPostgres()

func TestMain(m *testing.M) { pg.Main(m) }

func openTestStore(t *testing.T, p string) (*sqldb.DB, *Store) {
	t.Helper()
	db, err := sqldb.Open(t.Context(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s, err := OpenStore(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	return db, s
}

func testLease(ip, mac string) *Lease {
	return &Lease{IP: netip.MustParseAddr(ip), MAC: mac, Subnet: netip.MustParsePrefix("10.1.0.0/24"), State: Bound,
		Expires: t0.Add(time.Hour)}
}

func commit(l *Lease) *lease.Event {
	return &lease.Event{Kind: lease.Commit, MACAddress: l.MAC, IPAddress: l.IP.String(), Time: t0}
}

// TestLeaseExchangeKept: the time of a lease's last exchange and its relay
// are stored with it (a direct one has no relay).
func TestLeaseExchangeKept(t *testing.T) { pg.EachDB(t, testLeaseExchangeKept) }

func testLeaseExchangeKept(t *testing.T, db testpeer.DB) {
	_, s := openTestStore(t, db(t))
	relayed, direct := testLease("10.1.0.10", "02:00:00:00:00:0a"), testLease("10.1.0.11", "02:00:00:00:00:0b")
	relayed.Updated, relayed.Relay = t0.Add(time.Minute), netip.MustParseAddr("10.1.0.1")
	direct.Updated = t0.Add(2 * time.Minute)
	if _, err := s.Apply(t.Context(), []*Change{{Put: relayed}, {Put: direct}}, 0); err != nil {
		t.Fatal(err)
	}
	ls, err := s.Leases(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*Lease{}
	for _, l := range ls {
		got[l.MAC] = l
	}
	for _, want := range []*Lease{relayed, direct} {
		g := got[want.MAC]
		if g == nil || !g.Updated.Equal(want.Updated) || g.Relay != want.Relay {
			t.Errorf("%s stored as %+v, want Updated %v, Relay %v", want.MAC, g, want.Updated, want.Relay)
		}
	}
}

// TestApplyBatchNetEffect: one transaction's changes land as if applied
// one by one, in order (an address deleted then leased again is leased,
// leased then deleted is gone), with all their events in order.
func TestApplyBatchNetEffect(t *testing.T) { pg.EachDB(t, testApplyBatchNetEffect) }

func testApplyBatchNetEffect(t *testing.T, db testpeer.DB) {
	_, s := openTestStore(t, db(t))
	a, b, c := testLease("10.1.0.10", "02:00:00:00:00:0a"), testLease("10.1.0.11", "02:00:00:00:00:0b"), testLease("10.1.0.12", "02:00:00:00:00:0c")
	if _, err := s.Apply(t.Context(), []*Change{{Put: a}, {Put: c}}, 0); err != nil {
		t.Fatal(err)
	}
	a2 := testLease("10.1.0.10", "02:00:00:00:00:0d")
	changes := []*Change{
		{Delete: a.IP, Event: &lease.Event{Kind: lease.Release, MACAddress: a.MAC, IPAddress: a.IP.String()}},
		{Put: a2, Event: commit(a2), NewMAC: true},
		{Put: b, Event: commit(b)},
		{Delete: b.IP},
		{Put: c, Event: commit(c)}, // renewed twice in one batch
		{Put: c, Event: commit(c)},
	}
	rows, err := s.Apply(t.Context(), changes, 0)
	if err != nil {
		t.Fatal(err)
	}
	ls, err := s.Leases(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range ls {
		got = append(got, l.IP.String()+" "+l.MAC)
	}
	sort.Strings(got)
	if diff := cmp.Diff([]string{"10.1.0.10 02:00:00:00:00:0d", "10.1.0.12 02:00:00:00:00:0c"}, got); diff != "" {
		t.Errorf("leases (-want +got):\n%s", diff)
	}
	var macs []string
	for i, r := range rows {
		macs = append(macs, r.mac)
		if r.seq != rows[0].seq || r.last != (i == len(rows)-1) {
			t.Errorf("row %d: seq %d last %v, want one outbox row for the batch", i, r.seq, r.last)
		}
	}
	want := []string{a.MAC, a2.MAC, b.MAC, c.MAC, c.MAC}
	if diff := cmp.Diff(want, macs); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	left, err := s.outbox(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rows, left, cmp.AllowUnexported(outboxRow{})); diff != "" {
		t.Errorf("outbox read back (-written +read):\n%s", diff)
	}
	pend, err := s.pendingHSM(t.Context(), 10)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{a2.MAC: a2.IP.String()}, pend); diff != "" {
		t.Errorf("MACs pending for HSM (-want +got):\n%s", diff)
	}
}

// TestNewMACWithoutEvent: a server without a bus stores no events, and an
// unknown MAC it leases must still be queued for HSM.
func TestNewMACWithoutEvent(t *testing.T) { pg.EachDB(t, testNewMACWithoutEvent) }

func testNewMACWithoutEvent(t *testing.T, db testpeer.DB) {
	_, s := openTestStore(t, db(t))
	l := testLease("10.1.0.20", "02:00:00:00:00:20")
	rows, err := s.Apply(t.Context(), []*Change{{Put: l, NewMAC: true}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 0 {
		t.Errorf("outbox rows %v, want none without events", rows)
	}
	pend, err := s.pendingHSM(t.Context(), 10)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{l.MAC: l.IP.String()}, pend); diff != "" {
		t.Errorf("MACs pending for HSM (-want +got):\n%s", diff)
	}
}

// TestPartlyPublishedBatchIsKept: an outbox row leaves only once all of
// its events are published; a restart in between publishes the row again
// (at least once, never lost).
func TestPartlyPublishedBatchIsKept(t *testing.T) { pg.EachDB(t, testPartlyPublishedBatchIsKept) }

func testPartlyPublishedBatchIsKept(t *testing.T, db testpeer.DB) {
	_, s := openTestStore(t, db(t))
	rows, err := s.Apply(t.Context(), []*Change{
		{Event: commit(testLease("10.1.0.10", "02:00:00:00:00:0a"))},
		{Event: commit(testLease("10.1.0.11", "02:00:00:00:00:0b"))},
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	seq := rows[0].seq
	// Published up to the row before: nothing of this row may go.
	if _, err := s.Apply(t.Context(), nil, seq-1); err != nil {
		t.Fatal(err)
	}
	if left, _ := s.outbox(t.Context()); len(left) != 2 {
		t.Errorf("%d events left, want the row's 2", len(left))
	}
	if _, err := s.Apply(t.Context(), nil, seq); err != nil {
		t.Fatal(err)
	}
	if left, _ := s.outbox(t.Context()); len(left) != 0 {
		t.Errorf("%d events left after their row was published", len(left))
	}
}

// TestMigrationKeepsLeasesAndOutbox: a database of the first schema (one
// event per outbox row, leases in a rowid table) opens with its leases and
// unpublished events intact.
func TestMigrationKeepsLeasesAndOutbox(t *testing.T) { pg.EachDB(t, testMigrationKeepsLeasesAndOutbox) }

func testMigrationKeepsLeasesAndOutbox(t *testing.T, db testpeer.DB) {
	p := db(t)
	first, err := migrationFiles.ReadFile("migrations/1001_leases.sql")
	if err != nil {
		t.Fatal(err)
	}
	old, err := sqldb.Open(t.Context(), p, fstest.MapFS{"1001_leases.sql": {Data: first}})
	if err != nil {
		t.Fatal(err)
	}
	ev, _ := lease.Encode(*commit(testLease("10.1.0.10", "02:00:00:00:00:0a")))
	_, err = old.W.ExecContext(t.Context(), `INSERT INTO dhcp_leases (ip, mac, subnet, state, expires) VALUES ('10.1.0.10', '02:00:00:00:00:0a', '10.1.0.0/24', 1, ?)`,
		t0.Add(time.Hour).UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	if _, err = old.W.ExecContext(t.Context(), `INSERT INTO dhcp_outbox (seq, mac, event) VALUES (7, '02:00:00:00:00:0a', ?)`, string(ev)); err != nil {
		t.Fatal(err)
	}
	old.Close()
	_, s := openTestStore(t, p)
	ls, err := s.Leases(context.WithoutCancel(t.Context()))
	if err != nil || len(ls) != 1 || ls[0].MAC != "02:00:00:00:00:0a" || !ls[0].Expires.Equal(t0.Add(time.Hour)) ||
		!ls[0].Updated.IsZero() || ls[0].Relay.IsValid() {
		t.Fatalf("leases after migration: %+v, %v", ls, err)
	}
	left, err := s.outbox(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []outboxRow{{seq: 7, mac: "02:00:00:00:00:0a", event: ev, last: true}}
	if diff := cmp.Diff(want, left, cmp.AllowUnexported(outboxRow{})); diff != "" {
		t.Errorf("outbox after migration (-want +got):\n%s", diff)
	}
	if rows, err := s.Apply(t.Context(), []*Change{{Event: commit(testLease("10.1.0.11", "02:00:00:00:00:0b"))}}, 0); err != nil || rows[0].seq != 8 {
		t.Errorf("next outbox row %+v, %v; want seq 8", rows, err)
	}
}
