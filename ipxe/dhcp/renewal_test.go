package dhcp

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/insomniacslk/dhcp/dhcpv4"

	"github.com/hmsuite/hms/ipxe/lease"
	"github.com/hmsuite/hms/statemgr/hsm"
)

// TestRenewalOfUnknownMACPublished: a renewal of an unknown MAC's lease is
// published (a commit with the lease's new end) when the binding was last
// published half a lease time ago or more, and only then: renewals in
// between, however many, publish nothing. A known MAC's renewals never
// are. The clock is injected.
func TestRenewalOfUnknownMACPublished(t *testing.T) {
	h := newHarness(t, testConfig())
	const (
		known   = "02:00:00:00:00:02" // HSM's, no reserved address: the pool, 1 h leases
		unknown = "02:dc:00:00:00:02" // 5 min leases: published again from 2.5 min on
	)
	knownIP := h.dora(known).YourIPAddr.String()
	ip := h.dora(unknown).YourIPAddr.String()
	renew := func(mac, ip string) {
		t.Helper()
		if r := h.exchange(msg(t, dhcpv4.MessageTypeRequest, mac, dhcpv4.WithClientIP(net.ParseIP(ip)))); r == nil ||
			r.MessageType() != dhcpv4.MessageTypeAck {
			t.Fatalf("renewal of %s: %v", mac, r)
		}
	}
	type pub struct {
		Kind    lease.Kind
		MAC     string
		Expires time.Time
	}
	want := []pub{{Kind: lease.Commit, MAC: known, Expires: t0.Add(time.Hour)},
		{Kind: lease.Commit, MAC: unknown, Expires: t0.Add(DefaultUnknownLease)}}
	for _, step := range []struct {
		after   time.Duration // since the step before
		publish bool
	}{
		{after: time.Minute},                                   // 1 min: not yet
		{after: 90*time.Second - time.Second},                  // 2 min 29 s: not yet
		{after: time.Second, publish: true},                    // 2.5 min: its T1
		{after: 10 * time.Second},                              // an eager client: nothing
		{after: 2 * time.Minute},                               // 4 min 40 s: 2 min 10 s since
		{after: 20 * time.Second, publish: true},               // 5 min
		{after: 2*time.Minute + 30*time.Second, publish: true}, // 7.5 min
		{after: 3 * time.Minute, publish: true},                // REBINDING, late: 10.5 min
	} {
		h.clk.Add(step.after)
		renew(unknown, ip)
		renew(known, knownIP)
		if step.publish {
			want = append(want, pub{Kind: lease.Commit, MAC: unknown, Expires: h.clk.Now().Add(DefaultUnknownLease)})
		}
	}
	h.exchange(msg(t, dhcpv4.MessageTypeRelease, unknown, dhcpv4.WithClientIP(net.ParseIP(ip))))
	want = append(want, pub{Kind: lease.Release, MAC: unknown})
	var got []pub
	for _, e := range h.events(len(want)) {
		if e.IPAddress != map[string]string{known: knownIP, unknown: ip}[e.MACAddress] {
			t.Errorf("event %+v: address %s", e, e.IPAddress)
		}
		got = append(got, pub{Kind: e.Kind, MAC: e.MACAddress, Expires: e.Expires})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestFailedCommitRetried: when a commit fails its ACK is not sent, and the
// client's retry is handled as what it still is, a binding neither stored
// nor published: an unknown MAC bound for the first time reaches HSM, and a
// renewal due for publication is published. The table had decided both
// before the commit failed, so the retry was once taken for done: the MAC
// never reached HSM (until a restart), the renewal's event waited half a
// lease. The store fails by a trigger on the lease table.
func TestFailedCommitRetried(t *testing.T) {
	rec := &recordingHSM{macs: make(chan string, 4)}
	h := newHarnessHSM(t, testConfig(), rec)
	failing := func(on bool) {
		t.Helper()
		q := `DROP TRIGGER full`
		if on {
			q = `CREATE TRIGGER full BEFORE INSERT ON dhcp_leases BEGIN SELECT RAISE(ABORT, 'disk full'); END`
		}
		if _, err := h.sql.W.ExecContext(t.Context(), q); err != nil {
			t.Fatal(err)
		}
	}
	// twice sends req with the store failing (no ACK may come), then with
	// the store back (the ACK must).
	twice := func(req *dhcpv4.DHCPv4) {
		t.Helper()
		failing(true)
		if r := h.exchange(req); r != nil {
			t.Fatalf("%v answered though its commit failed", r)
		}
		failing(false)
		if r := h.exchange(req); r == nil || r.MessageType() != dhcpv4.MessageTypeAck {
			t.Fatalf("retry: %v, want an ACK", r)
		}
	}
	const mac = "02:dc:00:00:00:07"
	offer := h.exchange(msg(t, dhcpv4.MessageTypeDiscover, mac))
	if offer == nil {
		t.Fatal("no offer")
	}
	ip := offer.YourIPAddr
	twice(msg(t, dhcpv4.MessageTypeRequest, mac, withRequested(ip.String()), withServerID(offer.ServerIdentifier().String())))
	select {
	case got := <-rec.macs:
		if got != mac {
			t.Errorf("HSM got %s, want %s", got, mac)
		}
	case <-time.After(10 * time.Second): // a guard, not a timing
		t.Fatal("the unknown MAC never reached HSM")
	}
	h.clk.Add(DefaultUnknownLease / 2) // its T1: the renewal is published
	twice(msg(t, dhcpv4.MessageTypeRequest, mac, dhcpv4.WithClientIP(ip)))
	var got []time.Time
	for _, e := range h.events(2) {
		got = append(got, e.Expires)
	}
	want := []time.Time{t0.Add(DefaultUnknownLease), t0.Add(DefaultUnknownLease / 2).Add(DefaultUnknownLease)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("commit events' lease ends (-want +got):\n%s", diff)
	}
}

// recordingHSM passes on the MACs written to it.
type recordingHSM struct{ macs chan string }

func (r *recordingHSM) CreateEthernetInterface(_ context.Context, ei hsm.EthernetInterface) error {
	r.macs <- ei.MACAddress
	return nil
}
