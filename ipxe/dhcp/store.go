package dhcp

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"net/netip"
	"strings"
	"time"

	"github.com/hmsuite/hms/internal/sqldb"
	"github.com/hmsuite/hms/ipxe/lease"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Store keeps the leases, the lease events not yet published and the
// unknown MACs not yet written to HSM, in bss's database (SQLite or
// PostgreSQL).
type Store struct {
	db      *sqldb.DB
	nextSeq int64 // next outbox sequence number; only the writer uses it
}

// OpenStore applies the DHCP server's migrations to db (bss's database).
func OpenStore(ctx context.Context, db *sqldb.DB) (*Store, error) {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return nil, fmt.Errorf("dhcp migrations: %w", err)
	}
	if err := db.Migrate(ctx, sub); err != nil {
		return nil, err
	}
	s := &Store{db: db}
	if err := db.R.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) + 1 FROM dhcp_outbox`).Scan(&s.nextSeq); err != nil {
		return nil, fmt.Errorf("read lease outbox: %w", err)
	}
	return s, nil
}

// Leases reads every stored lease.
func (s *Store) Leases(ctx context.Context) ([]*Lease, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT ip, mac, subnet, state, expires, hostname, known, updated, relay FROM dhcp_leases`)
	if err != nil {
		return nil, fmt.Errorf("load leases: %w", err)
	}
	defer rows.Close()
	var out []*Lease
	for rows.Next() {
		var ip, subnet, relay string
		var ms, updated int64
		l := &Lease{}
		if err := rows.Scan(&ip, &l.MAC, &subnet, &l.State, &ms, &l.Hostname, &l.Known, &updated, &relay); err != nil {
			return nil, fmt.Errorf("load leases: %w", err)
		}
		if l.IP, err = netip.ParseAddr(ip); err != nil {
			continue
		}
		if l.Subnet, err = netip.ParsePrefix(subnet); err != nil {
			continue
		}
		l.Expires = time.UnixMilli(ms)
		if updated > 0 {
			l.Updated = time.UnixMilli(updated)
		}
		l.Relay, _ = netip.ParseAddr(relay) // '': direct
		out = append(out, l)
	}
	return out, rows.Err()
}

// leaseChunk is the most lease rows one multi-row statement carries (9
// parameters a row, well under SQLite's limit).
const leaseChunk = 128

// Apply stores changes in one transaction with a few multi-row statements
// whatever their number: the leases' net effect (an address written twice
// in the batch is written once), one outbox row holding all their events,
// and the new unknown MACs for HSM; the outbox rows up to published (when
// positive), which the bus has taken, leave in the same transaction. It
// returns the events written, one outboxRow each, for the relay.
func (s *Store) Apply(ctx context.Context, changes []*Change, published int64) ([]outboxRow, error) {
	puts, dels, macs := netEffect(changes)
	blob, rows, err := encodeEvents(changes)
	if err != nil {
		return nil, fmt.Errorf("store lease: %w", err)
	}
	seq := s.nextSeq
	for i := range rows {
		rows[i].seq = seq
	}
	// modernc.org/sqlite watches a cancellable context with a goroutine per
	// statement; the transaction keeps ctx.
	sctx := context.WithoutCancel(ctx)
	err = s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		if published > 0 {
			if err := s.exec(sctx, tx, `DELETE FROM dhcp_outbox WHERE seq <= ?`, published); err != nil {
				return fmt.Errorf("drop published lease events: %w", err)
			}
		}
		if err := s.deleteLeases(sctx, tx, dels); err != nil {
			return fmt.Errorf("store lease: %w", err)
		}
		if err := s.putLeases(sctx, tx, puts); err != nil {
			return fmt.Errorf("store lease: %w", err)
		}
		if blob != nil {
			if err := s.exec(sctx, tx, `INSERT INTO dhcp_outbox (seq, mac, event) VALUES (?, '', ?)`, seq, blob); err != nil {
				return fmt.Errorf("store lease events: %w", err)
			}
		}
		if err := s.putPendingHSM(sctx, tx, macs); err != nil {
			return fmt.Errorf("store unknown MACs: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if blob != nil {
		s.nextSeq++
	}
	return rows, nil
}

// netEffect folds changes, in order, into the leases to write, the
// addresses to delete, and the unknown MACs (with their addresses) to queue
// for HSM.
func netEffect(changes []*Change) (puts []*Lease, dels []string, macs [][2]string) {
	final := map[netip.Addr]*Lease{} // nil: deleted
	var order []netip.Addr
	set := func(a netip.Addr, l *Lease) {
		if _, seen := final[a]; !seen {
			order = append(order, a)
		}
		final[a] = l
	}
	var macOrder []string
	macIP := map[string]string{}
	for _, c := range changes {
		if c.Delete.IsValid() {
			set(c.Delete, nil)
		}
		if c.Put != nil {
			set(c.Put.IP, c.Put)
		}
		// The MAC for HSM comes from the lease, not the event: without a
		// Publisher there is no event, and HSM must still learn the MAC.
		if c.NewMAC && c.Put != nil {
			if _, seen := macIP[c.Put.MAC]; !seen {
				macOrder = append(macOrder, c.Put.MAC)
			}
			macIP[c.Put.MAC] = c.Put.IP.String()
		}
	}
	for _, a := range order {
		if l := final[a]; l != nil {
			puts = append(puts, l)
		} else {
			dels = append(dels, a.String())
		}
	}
	for _, m := range macOrder {
		macs = append(macs, [2]string{m, macIP[m]})
	}
	return puts, dels, macs
}

// encodeEvents renders the changes' events as JSON lines (nil: none) and
// returns one outboxRow per event, its bytes a part of the blob, the last
// one marked.
func encodeEvents(changes []*Change) ([]byte, []outboxRow, error) {
	var blob []byte
	var rows []outboxRow
	var ends []int // of each row's event in blob
	for _, c := range changes {
		if c.Event == nil {
			continue
		}
		var err error
		if blob, err = lease.Append(blob, *c.Event); err != nil {
			return nil, nil, err
		}
		rows = append(rows, outboxRow{mac: c.Event.MACAddress})
		ends = append(ends, len(blob))
		blob = append(blob, '\n')
	}
	// The rows' events are parts of the blob, which no longer moves.
	start := 0
	for i, end := range ends {
		rows[i].event = blob[start:end:end]
		start = end + 1
	}
	if len(rows) > 0 {
		rows[len(rows)-1].last = true
	}
	return blob, rows, nil
}

func (s *Store) putLeases(ctx context.Context, tx *sql.Tx, ls []*Lease) error {
	args := make([]any, 0, 9*min(len(ls), leaseChunk))
	return sqldb.Chunks(len(ls), leaseChunk, func(lo, hi int) error {
		args = args[:0]
		for _, l := range ls[lo:hi] {
			var updated int64
			if !l.Updated.IsZero() {
				updated = l.Updated.UnixMilli()
			}
			relay := ""
			if l.Relay.IsValid() {
				relay = l.Relay.String()
			}
			args = append(args, l.IP.String(), l.MAC, l.Subnet.String(), int64(l.State), l.Expires.UnixMilli(), l.Hostname, l.Known,
				updated, relay)
		}
		return s.exec(ctx, tx, `INSERT INTO dhcp_leases (ip, mac, subnet, state, expires, hostname, known, updated, relay) VALUES `+
			sqldb.Placeholders(hi-lo, 9)+` ON CONFLICT (ip) DO UPDATE SET mac = excluded.mac, subnet = excluded.subnet,
			state = excluded.state, expires = excluded.expires, hostname = excluded.hostname, known = excluded.known,
			updated = excluded.updated, relay = excluded.relay`, args...)
	})
}

func (s *Store) deleteLeases(ctx context.Context, tx *sql.Tx, ips []string) error {
	args := make([]any, 0, min(len(ips), leaseChunk))
	return sqldb.Chunks(len(ips), leaseChunk, func(lo, hi int) error {
		args = args[:0]
		for _, ip := range ips[lo:hi] {
			args = append(args, ip)
		}
		return s.exec(ctx, tx, `DELETE FROM dhcp_leases WHERE ip IN (`+strings.TrimSuffix(strings.Repeat("?, ", hi-lo), ", ")+`)`, args...)
	})
}

func (s *Store) putPendingHSM(ctx context.Context, tx *sql.Tx, macs [][2]string) error {
	args := make([]any, 0, 2*min(len(macs), leaseChunk))
	return sqldb.Chunks(len(macs), leaseChunk, func(lo, hi int) error {
		args = args[:0]
		for _, m := range macs[lo:hi] {
			args = append(args, m[0], m[1])
		}
		return s.exec(ctx, tx, `INSERT INTO dhcp_hsm_pending (mac, ip) VALUES `+sqldb.Placeholders(hi-lo, 2)+
			` ON CONFLICT (mac) DO UPDATE SET ip = excluded.ip`, args...)
	})
}

// outboxRow is one lease event waiting for the bus.
type outboxRow struct {
	seq   int64 // of the outbox row that holds it
	mac   string
	event []byte
	last  bool // the last event of its outbox row
}

// outbox returns the events left unpublished by the last run, oldest first.
func (s *Store) outbox(ctx context.Context) ([]outboxRow, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT seq, mac, event FROM dhcp_outbox ORDER BY seq`)
	if err != nil {
		return nil, fmt.Errorf("read lease outbox: %w", err)
	}
	defer rows.Close()
	var out []outboxRow
	for rows.Next() {
		var seq int64
		var mac, ev string
		if err := rows.Scan(&seq, &mac, &ev); err != nil {
			return nil, fmt.Errorf("read lease outbox: %w", err)
		}
		out = append(out, splitOutbox(seq, mac, ev)...)
	}
	return out, rows.Err()
}

// splitOutbox returns the events of one outbox row: JSON lines, each with
// its MAC (a row of the first schema holds one event, its mac beside it).
func splitOutbox(seq int64, mac, ev string) []outboxRow {
	var out []outboxRow
	for line := range strings.Lines(ev) {
		b := []byte(strings.TrimSuffix(line, "\n"))
		if len(b) == 0 {
			continue
		}
		r := outboxRow{seq: seq, mac: mac, event: b}
		if e, err := lease.Decode(b); err == nil {
			r.mac = e.MACAddress
		}
		out = append(out, r)
	}
	if len(out) > 0 {
		out[len(out)-1].last = true
	}
	return out
}

// pendingHSM returns up to n unknown MACs (and their leased IPs) not yet in HSM.
func (s *Store) pendingHSM(ctx context.Context, n int) (map[string]string, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT mac, ip FROM dhcp_hsm_pending ORDER BY mac LIMIT ?`, n)
	if err != nil {
		return nil, fmt.Errorf("read pending MACs: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var mac, ip string
		if err := rows.Scan(&mac, &ip); err != nil {
			return nil, fmt.Errorf("read pending MACs: %w", err)
		}
		out[mac] = ip
	}
	return out, rows.Err()
}

// writtenHSM drops macs from the pending list, unless their address changed
// meanwhile (then they are written again).
func (s *Store) writtenHSM(ctx context.Context, done map[string]string) error {
	if len(done) == 0 {
		return nil
	}
	return s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		for mac, ip := range done {
			if err := s.exec(ctx, tx, `DELETE FROM dhcp_hsm_pending WHERE mac = ? AND ip = ?`, mac, ip); err != nil {
				return fmt.Errorf("drop pending MAC: %w", err)
			}
		}
		return nil
	})
}

// hsmID is HSM's EthernetInterface ID for a MAC: its hex digits, lower case.
func hsmID(mac string) string { return strings.ReplaceAll(strings.ToLower(mac), ":", "") }

func (s *Store) exec(ctx context.Context, tx *sql.Tx, q string, args ...any) error {
	st, err := s.db.Stmt(ctx, tx, q)
	if err != nil {
		return err
	}
	_, err = st.ExecContext(ctx, args...)
	return err
}
