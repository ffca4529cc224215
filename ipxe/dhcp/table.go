package dhcp

import (
	"net/netip"
	"time"

	"github.com/hmsuite/hms/ipxe/lease"
)

// State is where a lease stands.
type State uint8

// Lease states. Only Bound and Declined leases are persisted: an offer lost
// in a restart is simply offered again.
const (
	Offered  State = iota // offered, not yet requested; held OfferHold
	Bound                 // acknowledged
	Declined              // a client found the address in use; kept out of the pool for a lease time
)

// Lease is one address in use.
type Lease struct {
	IP       netip.Addr
	MAC      string // lease.NormalizeMAC form; empty when Declined
	Subnet   netip.Prefix
	State    State
	Expires  time.Time
	Hostname string
	Known    bool // HSM knows the MAC
	// unstored: the commit of this binding failed (its ACK was not sent),
	// so the client's retry is handled as a new binding: published, and
	// an unknown MAC written to HSM (Handler.markUnstored). Memory only.
	unstored bool
	// announced is when a commit event of this binding was last
	// published, in Unix seconds (memory only; announce): it fills the
	// padding after Known, so a Lease is no bigger on the DORA path.
	announced uint32
	// Updated is when the client last asked about this lease (its
	// DISCOVER or REQUEST); Relay the giaddr that exchange came through
	// (invalid when direct).
	Updated time.Time
	Relay   netip.Addr
}

// Change is what one handled packet changes and must be stored before its
// reply is sent: a lease written or removed, the event to publish, and an
// unknown MAC to write to HSM.
type Change struct {
	Put    *Lease     // copy of the lease written
	Delete netip.Addr // address whose lease is removed (invalid: none)
	Event  *lease.Event
	NewMAC bool // Put's MAC is unknown and new: write it to HSM
}

// table is the lease table in memory; the database holds its durable copy
// (Bound and Declined leases), loaded at start. Handler holds mu while it
// decides.
type table struct {
	byIP  map[netip.Addr]*Lease
	byMAC map[string]*Lease
	next  map[netip.Prefix]netip.Addr // where each pool's next scan starts
}

func newTable() *table {
	return &table{byIP: map[netip.Addr]*Lease{}, byMAC: map[string]*Lease{}, next: map[netip.Prefix]netip.Addr{}}
}

func (t *table) put(l *Lease) {
	if old := t.byIP[l.IP]; old != nil && old != l {
		t.remove(old)
	}
	if l.MAC != "" {
		if old := t.byMAC[l.MAC]; old != nil && old != l {
			t.remove(old)
		}
		t.byMAC[l.MAC] = l
	}
	t.byIP[l.IP] = l
}

func (t *table) remove(l *Lease) {
	if t.byIP[l.IP] == l {
		delete(t.byIP, l.IP)
	}
	if l.MAC != "" && t.byMAC[l.MAC] == l {
		delete(t.byMAC, l.MAC)
	}
}

// free reports whether a may be given to mac at now: nobody holds it, or
// mac does, or the holder's lease (or offer, or decline) has run out.
func (t *table) free(a netip.Addr, mac string, now time.Time) bool {
	l := t.byIP[a]
	return l == nil || (l.MAC == mac && l.State != Declined) || !now.Before(l.Expires)
}

// scan returns the first address of s's pool, from its cursor on, that
// ok accepts; invalid when the pool is exhausted.
func (t *table) scan(s *Subnet, ok func(netip.Addr) bool) netip.Addr {
	start := t.next[s.Prefix]
	if !s.Contains(start) {
		start = s.First
	}
	a := start
	for {
		if ok(a) {
			n := a.Next()
			if !s.Contains(n) {
				n = s.First
			}
			t.next[s.Prefix] = n
			return a
		}
		if a = a.Next(); !s.Contains(a) {
			a = s.First
		}
		if a == start {
			return netip.Addr{}
		}
	}
}

// expired removes every lease past its time at now and returns the Bound
// ones that ran out (their Expire events are due) and the Declined ones
// (their rows are due for deletion); offers vanish silently.
func (t *table) expired(now time.Time) (bound, declined []*Lease) {
	for _, l := range t.byIP {
		if now.Before(l.Expires) {
			continue
		}
		t.remove(l)
		switch l.State {
		case Bound:
			bound = append(bound, l)
		case Declined:
			declined = append(declined, l)
		}
	}
	return bound, declined
}
