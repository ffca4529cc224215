package discovery

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// leaseChange is a lease reds learnt of (IP set, ending at Expires) or saw
// end (IP empty).
type leaseChange struct {
	MAC, IP string
	Expires time.Time
}

// heldLease is a lease a MAC holds, as reds was told: its address and
// when it ends unless renewed.
type heldLease struct {
	ip      string
	expires time.Time
}

// Leases returns the leases kept, by MAC.
func (s *Store) Leases(ctx context.Context) (map[string]heldLease, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT mac, ip, expires FROM leases`)
	if err != nil {
		return nil, fmt.Errorf("read leases: %w", err)
	}
	defer rows.Close()
	m := map[string]heldLease{}
	for rows.Next() {
		var mac, ip string
		var exp int64
		if err := rows.Scan(&mac, &ip, &exp); err != nil {
			return nil, fmt.Errorf("read leases: %w", err)
		}
		m[mac] = heldLease{ip: ip, expires: time.Unix(exp, 0)}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read leases: %w", err)
	}
	return m, nil
}

// PutLeases applies changes in one transaction.
func (s *Store) PutLeases(ctx context.Context, changes []leaseChange) error {
	if len(changes) == 0 {
		return nil
	}
	now := s.now().Unix()
	return s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		for _, c := range changes {
			var err error
			if c.IP == "" {
				_, err = tx.ExecContext(ctx, `DELETE FROM leases WHERE mac = ?`, c.MAC)
			} else {
				_, err = tx.ExecContext(ctx, `INSERT INTO leases (mac, ip, updated, expires) VALUES (?, ?, ?, ?)
					ON CONFLICT (mac) DO UPDATE SET ip = excluded.ip, updated = excluded.updated, expires = excluded.expires`,
					c.MAC, c.IP, now, c.Expires.Unix())
			}
			if err != nil {
				return fmt.Errorf("store lease of %s: %w", c.MAC, err)
			}
		}
		return nil
	})
}

// SweepLeases deletes the leases that ended at or before cutoff and
// returns how many.
func (s *Store) SweepLeases(ctx context.Context, cutoff time.Time) (int64, error) {
	var n int64
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM leases WHERE expires <= ?`, cutoff.Unix())
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sweep leases: %w", err)
	}
	return n, nil
}
