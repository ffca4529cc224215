package discovery

import (
	"context"
	"database/sql"
	"fmt"
)

// leaseChange is a lease reds learnt of (IP set) or saw end (IP empty).
type leaseChange struct{ MAC, IP string }

// Leases returns the leases kept, address by MAC.
func (s *Store) Leases(ctx context.Context) (map[string]string, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT mac, ip FROM leases`)
	if err != nil {
		return nil, fmt.Errorf("read leases: %w", err)
	}
	defer rows.Close()
	m := map[string]string{}
	for rows.Next() {
		var mac, ip string
		if err := rows.Scan(&mac, &ip); err != nil {
			return nil, fmt.Errorf("read leases: %w", err)
		}
		m[mac] = ip
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
				_, err = tx.ExecContext(ctx, `INSERT INTO leases (mac, ip, updated) VALUES (?, ?, ?)
					ON CONFLICT (mac) DO UPDATE SET ip = excluded.ip, updated = excluded.updated`, c.MAC, c.IP, now)
			}
			if err != nil {
				return fmt.Errorf("store lease of %s: %w", c.MAC, err)
			}
		}
		return nil
	})
}
