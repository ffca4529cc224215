package statemgr

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"time"

	"github.com/hmsuite/hms/internal/sqldb"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Store is HSM's persistent state on SQLite. Methods are split across files by
// concern (components, groups, locks, ...), all on this one type.
type Store struct {
	db  *sqldb.DB
	now func() time.Time
}

// OpenStore opens (creating if needed) the SQLite database at path and applies
// the migrations. now is the clock; nil means time.Now.
func OpenStore(ctx context.Context, path string, now func() time.Time) (*Store, error) {
	if now == nil {
		now = time.Now
	}
	migs, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return nil, fmt.Errorf("hsm migrations: %w", err)
	}
	db, err := sqldb.Open(ctx, path, migs)
	if err != nil {
		return nil, err
	}
	return &Store{db: db, now: now}, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Ping reports whether the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.Ping(ctx) }
