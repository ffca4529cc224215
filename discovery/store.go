package discovery

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/hmsuite/hms/internal/problem"
	"github.com/hmsuite/hms/internal/sealed"
	"github.com/hmsuite/hms/internal/sqldb"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Endpoint states as stored.
const (
	StatePending    = "pending"
	StateRegistered = "registered"
	StateMissing    = "missing"
	// StateRemoving is a BMC gone and no longer in SLS that HSM has not
	// yet been told of (it was unreachable); retried until it is.
	StateRemoving = "removing"
	StateRemoved  = "removed"
)

// Endpoint kinds: found on a switch (River) or computed from SLS (Mountain).
const (
	KindRiver    = "river"
	KindMountain = "mountain"
)

// Endpoint is one BMC discovery has dealt with. Password and Pending are
// in clear in memory only. Key is the TLS key pinned at its first
// registration (pin.go; empty: none yet).
type Endpoint struct {
	Xname, Kind, MAC, IP, Addr, User string
	Password, Pending                string
	State                            string
	Key                              string
	Updated                          time.Time
}

// Store keeps the endpoints in SQLite or PostgreSQL with their passwords
// sealed.
type Store struct {
	db  *sqldb.DB
	box *sealed.Box
	now func() time.Time
}

// OpenStore opens (creating if needed) the SQLite file at path, or the
// PostgreSQL database a postgres:// path names (sqldb.Open); box seals
// the passwords.
func OpenStore(ctx context.Context, path string, box *sealed.Box, now func() time.Time) (*Store, error) {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return nil, fmt.Errorf("reds migrations: %w", err)
	}
	db, err := sqldb.Open(ctx, path, sub)
	if err != nil {
		return nil, err
	}
	if now == nil {
		now = time.Now
	}
	s := &Store{db: db, box: box, now: now}
	if err := s.dropRegisteredNodeCreds(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// dropRegisteredNodeCreds deletes the node-side passwords kept by earlier
// versions that are the password of a BMC registered with their MAC
// (state registered, or missing since): Register drops such a row in its
// transaction, and so, at open, does this. The rule is Register's, not a
// time's: a password handed out after the registration (an admin's, for
// a BMC being set up again) or one the node may still set (reds logged in
// with another) differs from the endpoint's and is kept, and so is a row
// that does not open.
func (s *Store) dropRegisteredNodeCreds(ctx context.Context) error {
	rows, err := s.db.R.QueryContext(ctx, `SELECT n.mac, n.password, e.xname, e.password FROM node_creds n
		JOIN endpoints e ON e.mac = n.mac WHERE e.state IN ('registered', 'missing')`)
	if err != nil {
		return fmt.Errorf("read node credentials: %w", err)
	}
	defer rows.Close()
	var drop []NodeCred
	for rows.Next() {
		var nc NodeCred
		var xname string
		var pw []byte
		if err := rows.Scan(&nc.MAC, &nc.sealed, &xname, &pw); err != nil {
			return fmt.Errorf("read node credentials: %w", err)
		}
		node, err1 := s.open(nc.MAC, nc.sealed)
		own, err2 := s.open(xname, pw)
		if err1 == nil && err2 == nil && node != "" && node == own {
			drop = append(drop, nc)
		}
	}
	if err := rows.Err(); err != nil || len(drop) == 0 {
		return err
	}
	rows.Close()
	return s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		for _, nc := range drop {
			if _, err := tx.ExecContext(ctx, `DELETE FROM node_creds WHERE mac = ? AND password = ?`, nc.MAC, nc.sealed); err != nil {
				return fmt.Errorf("drop node credentials of %s: %w", nc.MAC, err)
			}
		}
		return nil
	})
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.Ping(ctx) }

const endpointCols = `xname, kind, mac, ip, addr, username, password, pending, state, updated, tls_key`

// Get returns the endpoint xname (ErrNotFound if none).
func (s *Store) Get(ctx context.Context, xname string) (Endpoint, error) {
	row := s.db.R.QueryRowContext(ctx, `SELECT `+endpointCols+` FROM endpoints WHERE xname = ?`, xname)
	e, err := s.scan(row.Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return Endpoint{}, problem.NotFoundf("endpoint %s: none", xname)
	}
	return e, err
}

// List returns every endpoint in state (all if state is empty).
func (s *Store) List(ctx context.Context, state string) ([]Endpoint, error) {
	q, args := `SELECT `+endpointCols+` FROM endpoints`, []any{}
	if state != "" {
		q, args = q+` WHERE state = ?`, []any{state}
	}
	rows, err := s.db.R.QueryContext(ctx, q+` ORDER BY xname`, args...)
	if err != nil {
		return nil, fmt.Errorf("list endpoints: %w", err)
	}
	defer rows.Close()
	var out []Endpoint
	for rows.Next() {
		e, err := s.scan(rows.Scan)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

func (s *Store) scan(scan func(...any) error) (Endpoint, error) {
	var e Endpoint
	var pw, pend []byte
	var updated int64
	if err := scan(&e.Xname, &e.Kind, &e.MAC, &e.IP, &e.Addr, &e.User, &pw, &pend, &e.State, &updated, &e.Key); err != nil {
		return e, err
	}
	e.Updated = time.Unix(updated, 0).UTC()
	var err error
	if e.Password, err = s.open(e.Xname, pw); err != nil {
		return e, err
	}
	e.Pending, err = s.open(e.Xname, pend)
	return e, err
}

func (s *Store) open(id string, b []byte) (string, error) {
	if len(b) == 0 {
		return "", nil
	}
	p, err := s.box.Open(id, b)
	return string(p), err
}

func (s *Store) seal(id, p string) ([]byte, error) {
	if p == "" {
		return nil, nil
	}
	return s.box.Seal(id, []byte(p))
}

// Put creates or replaces e (Updated is set to now).
func (s *Store) Put(ctx context.Context, e Endpoint) error {
	return s.put(ctx, e, NodeCred{})
}

// Register stores e as registered in HSM (its state set so) and, in the
// same transaction, deletes the node-side password nc that provisioning
// read, if it is still the one stored for its MAC: from now on the
// endpoint's own password is what logs in to the BMC (it is tried first,
// by xname), so that copy is not kept. A password handed out since nc was
// read (the node may be about to set it in-band) is left alone.
func (s *Store) Register(ctx context.Context, e Endpoint, nc NodeCred) error {
	e.State = StateRegistered
	return s.put(ctx, e, nc)
}

// put upserts e and deletes nc's row (if any and unchanged) in one
// transaction.
func (s *Store) put(ctx context.Context, e Endpoint, nc NodeCred) error {
	pw, err := s.seal(e.Xname, e.Password)
	if err != nil {
		return err
	}
	pend, err := s.seal(e.Xname, e.Pending)
	if err != nil {
		return err
	}
	return s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO endpoints (`+endpointCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (xname) DO UPDATE SET kind = excluded.kind, mac = excluded.mac, ip = excluded.ip,
			addr = excluded.addr, username = excluded.username, password = excluded.password,
			pending = excluded.pending, state = excluded.state, updated = excluded.updated,
			tls_key = CASE WHEN excluded.tls_key = '' THEN endpoints.tls_key ELSE excluded.tls_key END`,
			e.Xname, e.Kind, e.MAC, e.IP, e.Addr, e.User, pw, pend, e.State, s.now().Unix(), e.Key)
		if err != nil {
			return fmt.Errorf("store endpoint %s: %w", e.Xname, err)
		}
		if nc.sealed == nil {
			return nil
		}
		// Compared sealed: each seal has its own nonce, so a password
		// issued since differs even if drawn alike.
		if _, err := tx.ExecContext(ctx, `DELETE FROM node_creds WHERE mac = ? AND password = ?`, nc.MAC, nc.sealed); err != nil {
			return fmt.Errorf("drop node credentials of %s: %w", nc.MAC, err)
		}
		return nil
	})
}

// SetState changes the state of xname.
func (s *Store) SetState(ctx context.Context, xname, state string) error {
	return s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE endpoints SET state = ?, updated = ? WHERE xname = ?`, state, s.now().Unix(), xname)
		if err != nil {
			return fmt.Errorf("store endpoint %s: %w", xname, err)
		}
		return nil
	})
}

// ClearKey forgets the TLS key pinned for xname (ErrNotFound if reds has
// no such endpoint): the next presence check (PinKey) or registration pins
// the key it presents then.
// Put never clears a pin (an Endpoint without a Key keeps the stored one).
func (s *Store) ClearKey(ctx context.Context, xname string) error {
	var n int64
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE endpoints SET tls_key = '', updated = ? WHERE xname = ?`, s.now().Unix(), xname)
		if err != nil {
			return fmt.Errorf("clear TLS key of %s: %w", xname, err)
		}
		n, err = res.RowsAffected()
		return err
	})
	if err == nil && n == 0 {
		return problem.NotFoundf("endpoint %s: none", xname)
	}
	return err
}

// PinKey pins key for xname unless a key is pinned already, and reports
// whether it did.
func (s *Store) PinKey(ctx context.Context, xname, key string) (bool, error) {
	var n int64
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE endpoints SET tls_key = ? WHERE xname = ? AND tls_key = ''`, key, xname)
		if err != nil {
			return fmt.Errorf("pin TLS key of %s: %w", xname, err)
		}
		n, err = res.RowsAffected()
		return err
	})
	return n > 0, err
}

// SetStateFrom sets xname's state to state only if it is still from, and
// reports whether it was (a removal must not overwrite a registration that
// came in while HSM was being told).
func (s *Store) SetStateFrom(ctx context.Context, xname, from, state string) (bool, error) {
	var n int64
	err := s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE endpoints SET state = ?, updated = ? WHERE xname = ? AND state = ?`, state, s.now().Unix(), xname, from)
		if err != nil {
			return fmt.Errorf("store endpoint %s: %w", xname, err)
		}
		n, err = res.RowsAffected()
		return err
	})
	return n > 0, err
}

// ByMAC returns the endpoint with mac (the newest, if several).
func (s *Store) ByMAC(ctx context.Context, mac string) (Endpoint, error) {
	row := s.db.R.QueryRowContext(ctx, `SELECT `+endpointCols+` FROM endpoints WHERE mac = ? ORDER BY updated DESC LIMIT 1`, mac)
	e, err := s.scan(row.Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return Endpoint{}, problem.NotFoundf("endpoint with MAC %s: none", mac)
	}
	return e, err
}

// PutNodeCreds keeps the password handed to the node-side flow for mac.
func (s *Store) PutNodeCreds(ctx context.Context, mac, password string) error {
	pw, err := s.seal(mac, password)
	if err != nil {
		return err
	}
	return s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO node_creds (mac, password, created) VALUES (?, ?, ?)
			ON CONFLICT (mac) DO UPDATE SET password = excluded.password, created = excluded.created`, mac, pw, s.now().Unix())
		if err != nil {
			return fmt.Errorf("store node credentials: %w", err)
		}
		return nil
	})
}

// NodeCred is the password handed to the node-side flow for MAC, as
// stored (Password empty: none).
type NodeCred struct {
	MAC, Password string
	sealed        []byte // as stored: Register deletes the row only if unchanged
}

// NodeCreds returns the password handed out for mac and not yet dropped
// by the registration of its BMC (Register).
func (s *Store) NodeCreds(ctx context.Context, mac string) (NodeCred, error) {
	nc := NodeCred{MAC: mac}
	err := s.db.R.QueryRowContext(ctx, `SELECT password FROM node_creds WHERE mac = ?`, mac).Scan(&nc.sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return nc, nil
	}
	if err != nil {
		return nc, fmt.Errorf("read node credentials: %w", err)
	}
	nc.Password, err = s.open(mac, nc.sealed)
	return nc, err
}
