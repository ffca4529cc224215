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
// unknown MACs not yet written to HSM, in bss's SQLite database.
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
	rows, err := s.db.R.QueryContext(ctx, `SELECT ip, mac, subnet, state, expires, hostname, known FROM dhcp_leases`)
	if err != nil {
		return nil, fmt.Errorf("load leases: %w", err)
	}
	defer rows.Close()
	var out []*Lease
	for rows.Next() {
		var ip, subnet string
		var ms int64
		l := &Lease{}
		if err := rows.Scan(&ip, &l.MAC, &subnet, &l.State, &ms, &l.Hostname, &l.Known); err != nil {
			return nil, fmt.Errorf("load leases: %w", err)
		}
		if l.IP, err = netip.ParseAddr(ip); err != nil {
			continue
		}
		if l.Subnet, err = netip.ParsePrefix(subnet); err != nil {
			continue
		}
		l.Expires = time.UnixMilli(ms)
		out = append(out, l)
	}
	return out, rows.Err()
}

// Apply stores changes in one transaction: leases, their events in the
// outbox, and new unknown MACs for HSM; the outbox rows up to published
// (when positive), which the bus has taken, leave in the same transaction.
// It returns the outbox rows written, for the relay.
func (s *Store) Apply(ctx context.Context, changes []*Change, published int64) (rows []outboxRow, err error) {
	next := s.nextSeq
	err = s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		rows, s.nextSeq = rows[:0], next // WriteTx may run this again
		if published > 0 {
			if err := s.exec(ctx, tx, `DELETE FROM dhcp_outbox WHERE seq <= ?`, published); err != nil {
				return fmt.Errorf("drop published lease events: %w", err)
			}
		}
		for _, c := range changes {
			r, err := s.apply(ctx, tx, c)
			if err != nil {
				return fmt.Errorf("store lease: %w", err)
			}
			if r != nil {
				rows = append(rows, *r)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rows, nil
}

func (s *Store) apply(ctx context.Context, tx *sql.Tx, c *Change) (*outboxRow, error) {
	if c.Delete.IsValid() {
		if err := s.exec(ctx, tx, `DELETE FROM dhcp_leases WHERE ip = ?`, c.Delete.String()); err != nil {
			return nil, err
		}
	}
	if l := c.Put; l != nil {
		err := s.exec(ctx, tx, `INSERT INTO dhcp_leases (ip, mac, subnet, state, expires, hostname, known) VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (ip) DO UPDATE SET mac = excluded.mac, subnet = excluded.subnet, state = excluded.state,
			expires = excluded.expires, hostname = excluded.hostname, known = excluded.known`,
			l.IP.String(), l.MAC, l.Subnet.String(), l.State, l.Expires.UnixMilli(), l.Hostname, l.Known)
		if err != nil {
			return nil, err
		}
	}
	if c.Event == nil {
		return nil, nil
	}
	b, err := lease.Encode(*c.Event)
	if err != nil {
		return nil, err
	}
	r := &outboxRow{seq: s.nextSeq, mac: c.Event.MACAddress, event: b}
	s.nextSeq++
	if err := s.exec(ctx, tx, `INSERT INTO dhcp_outbox (seq, mac, event) VALUES (?, ?, ?)`, r.seq, r.mac, string(b)); err != nil {
		return nil, err
	}
	if c.NewMAC {
		err = s.exec(ctx, tx, `INSERT INTO dhcp_hsm_pending (mac, ip) VALUES (?, ?) ON CONFLICT (mac) DO UPDATE SET ip = excluded.ip`,
			c.Event.MACAddress, c.Event.IPAddress)
	}
	return r, err
}

func (s *Store) exec(ctx context.Context, tx *sql.Tx, q string, args ...any) error {
	st, err := s.db.Stmt(ctx, tx, q)
	if err != nil {
		return err
	}
	_, err = st.ExecContext(ctx, args...)
	return err
}

// outboxRow is one lease event waiting for the bus.
type outboxRow struct {
	seq   int64
	mac   string
	event []byte
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
		var r outboxRow
		var ev string
		if err := rows.Scan(&r.seq, &r.mac, &ev); err != nil {
			return nil, fmt.Errorf("read lease outbox: %w", err)
		}
		r.event = []byte(ev)
		out = append(out, r)
	}
	return out, rows.Err()
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
