package nodes

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/hmsuite/hms/internal/sqldb"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Store keeps the resources the daemon owns, each as its JSON document,
// and the sealed BMC credentials.
type Store struct {
	db *sqldb.DB
	// gen counts the committed Writes: a state read when it had a value
	// is current while it keeps it.
	gen atomic.Int64
}

// Row is one stored resource: its document and when it last changed.
type Row struct {
	Kind, Name string
	Doc        json.RawMessage
	Updated    time.Time
}

// OpenStore opens (creating if needed) the SQLite file at path, or the
// PostgreSQL database a postgres:// path names (sqldb.Open).
func OpenStore(ctx context.Context, path string) (*Store, error) {
	db, err := sqldb.OpenEmbedded(ctx, path, migrationFiles)
	if err != nil {
		return nil, err
	}
	return &Store{db: db}, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Ping checks the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.Ping(ctx) }

// Rows returns every stored resource of kind ("" for all), by name.
func (s *Store) Rows(ctx context.Context, kind string) ([]Row, error) {
	rows, err := s.db.R.QueryContext(ctx, `SELECT kind, name, doc, updated FROM resources
		WHERE ? = '' OR kind = ? ORDER BY kind, name`, kind, kind)
	if err != nil {
		return nil, fmt.Errorf("list resources: %w", err)
	}
	defer rows.Close()
	var out []Row
	for rows.Next() {
		var r Row
		var doc string
		var updated int64
		if err := rows.Scan(&r.Kind, &r.Name, &doc, &updated); err != nil {
			return nil, fmt.Errorf("list resources: %w", err)
		}
		r.Doc, r.Updated = json.RawMessage(doc), time.Unix(0, updated).UTC()
		out = append(out, r)
	}
	return out, rows.Err()
}

// Row returns one stored resource; ok is false when there is none.
func (s *Store) Row(ctx context.Context, kind, name string) (r Row, ok bool, err error) {
	var doc string
	var updated int64
	err = s.db.R.QueryRowContext(ctx, `SELECT doc, updated FROM resources WHERE kind = ? AND name = ?`,
		kind, name).Scan(&doc, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return Row{}, false, nil
	}
	if err != nil {
		return Row{}, false, fmt.Errorf("read %s %s: %w", kind, name, err)
	}
	return Row{Kind: kind, Name: name, Doc: json.RawMessage(doc), Updated: time.Unix(0, updated).UTC()}, true, nil
}

// Gen is the count of committed Writes.
func (s *Store) Gen() int64 { return s.gen.Load() }

// Write stores puts and removes deletes in one transaction. A put's
// Updated is set to now.
func (s *Store) Write(ctx context.Context, puts []Row, deletes []Row) error {
	if len(puts)+len(deletes) == 0 {
		return nil
	}
	defer s.gen.Add(1) // after the commit (or a failure, which may have committed)
	return s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		for _, r := range puts {
			if _, err := tx.ExecContext(ctx, `INSERT INTO resources (kind, name, doc, updated) VALUES (?, ?, ?, ?)
				ON CONFLICT (kind, name) DO UPDATE SET doc = excluded.doc, updated = excluded.updated`,
				r.Kind, r.Name, string(r.Doc), r.Updated.UnixNano()); err != nil {
				return fmt.Errorf("store %s %s: %w", r.Kind, r.Name, err)
			}
		}
		for _, r := range deletes {
			if _, err := tx.ExecContext(ctx, `DELETE FROM resources WHERE kind = ? AND name = ?`, r.Kind, r.Name); err != nil {
				return fmt.Errorf("delete %s %s: %w", r.Kind, r.Name, err)
			}
		}
		return nil
	})
}

// PutSecret stores a sealed credential under ref.
func (s *Store) PutSecret(ctx context.Context, ref string, sealed []byte) error {
	return s.db.WriteTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO secrets (ref, sealed) VALUES (?, ?)
			ON CONFLICT (ref) DO UPDATE SET sealed = excluded.sealed`, ref, sealed)
		if err != nil {
			return fmt.Errorf("store secret %s: %w", ref, err)
		}
		return nil
	})
}

// Secret returns the sealed credential stored under ref; ok is false when
// there is none.
func (s *Store) Secret(ctx context.Context, ref string) (sealed []byte, ok bool, err error) {
	err = s.db.R.QueryRowContext(ctx, `SELECT sealed FROM secrets WHERE ref = ?`, ref).Scan(&sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read secret %s: %w", ref, err)
	}
	return sealed, true, nil
}
